package chaos

import (
	"fmt"
	"syscall"
)

// Windows has no process groups to signal and no SIGTERM, SIGSTOP or
// SIGCONT to send a console-less child: the one way os/exec offers to end a
// child is TerminateProcess (Process.Kill), which ends the child alone (not
// what it started) and cannot be caught. So a server started here is killed
// at once when it must stop, rather than asked first, and stdio sessions,
// whose shutdown ladder and signal faults need the signals, are refused
// (see StdioSupported and docs/platforms.md).

// stdioSupported says stdio sessions can run here: not on Windows (see
// StdioSupported).
const stdioSupported = false

// gracefulStop says the shutdown ladder can ask the server to stop
// (SIGTERM) before it kills it: not on Windows.
const gracefulStop = false

// SignalGroup ends the child for SIGKILL (Process.Kill); no other signal
// can be sent on Windows, and no process receives it. It reports whether
// the child was killed.
func (p *Process) SignalGroup(sig syscall.Signal) bool {
	if sig != syscall.SIGKILL || p.cmd.Process.Kill() != nil {
		return false
	}
	p.killed.Store(true)
	return true
}

// exitSignal is "SIGKILL" when SignalGroup killed the child: its exit
// status (1, TerminateProcess's) does not say so. Valid after Done.
func (p *Process) exitSignal() string {
	if p.killed.Load() && !p.state.Success() {
		return "SIGKILL"
	}
	return ""
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM",
	syscall.SIGTERM: "SIGTERM",
}

// SignalName is the conventional name of a signal ("SIGTERM").
func SignalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

// faultSignals are the signals a signal fault can send: none can be sent
// on Windows, where stdio sessions, which carry signal faults, are refused.
var faultSignals = map[string]syscall.Signal{}

// sigCONT stands for SIGCONT, which Windows lacks: never sent, since no
// SIGSTOP fault can fire there (faultSignals is empty). Linux's number.
const sigCONT = syscall.Signal(18)
