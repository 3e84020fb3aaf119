//go:build unix

package chaos

import (
	"fmt"
	"syscall"
)

// stdioSupported says stdio sessions can run here (see StdioSupported).
const stdioSupported = true

// gracefulStop says the shutdown ladder can ask the server to stop
// (SIGTERM) before it kills it: true wherever there are signals.
const gracefulStop = true

// SignalGroup sends sig to the child's whole process group, so grandchildren
// (a shell's child, `go run`'s binary, `npx`'s node) get it too. It reports
// whether any process received it.
func (p *Process) SignalGroup(sig syscall.Signal) bool {
	return syscall.Kill(-p.PID(), sig) == nil
}

// exitSignal names the signal that ended the child, "" if none did; valid
// after Done.
func (p *Process) exitSignal() string {
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return SignalName(ws.Signal())
	}
	return ""
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGSTOP: "SIGSTOP", syscall.SIGCONT: "SIGCONT",
}

// SignalName is the conventional name of a signal ("SIGTERM").
func SignalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

// faultSignals are the signals a signal fault can send.
var faultSignals = map[string]syscall.Signal{
	"SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL, "SIGINT": syscall.SIGINT, "SIGSTOP": syscall.SIGSTOP,
}

// sigCONT resumes a server a SIGSTOP fault stopped.
const sigCONT = syscall.SIGCONT
