//go:build unix

package suite

import (
	"syscall"

	"github.com/mcpchaos/mcpchaos/chaos"
)

// clientGracefulStop says a client past its deadline is asked to stop
// (SIGTERM) before it is killed: true wherever there are signals.
const clientGracefulStop = true

// clientSysProcAttr starts the client in a process group of its own, so
// that killGroup reaches what it started too.
func clientSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// terminate sends the client SIGTERM.
func (c *clientProcess) terminate() { _ = syscall.Kill(c.pgid, syscall.SIGTERM) }

// killGroup sends SIGKILL to the client's whole process group.
func (c *clientProcess) killGroup() { _ = syscall.Kill(-c.pgid, syscall.SIGKILL) }

// exitSignal names the signal that ended the client, "" if none did;
// valid once it has exited.
func (c *clientProcess) exitSignal() string {
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return chaos.SignalName(ws.Signal())
	}
	return ""
}

// askProbe asks the wrap process pid for a liveness probe (SIGUSR1).
func askProbe(pid int) { _ = syscall.Kill(pid, syscall.SIGUSR1) }

// processGone reports whether no process pid is left.
func processGone(pid int) bool { return syscall.Kill(pid, 0) != nil }
