package suite

import "syscall"

// Windows has no process groups to signal and no SIGTERM or SIGUSR1 to
// send: os/exec's Process.Kill (TerminateProcess) is the one way to end a
// child, and it ends the child alone, not what the child started. So a
// client program past its deadline is killed at once. What needs more
// (test-client over stdio, whose server runs under mcpchaos wrap) is
// refused before it starts: see chaos.StdioSupported and docs/platforms.md.

// clientGracefulStop says a client past its deadline is asked to stop
// (SIGTERM) before it is killed: not on Windows.
const clientGracefulStop = false

// clientSysProcAttr starts the client in a console process group of its
// own, so a Ctrl-C meant for mcpchaos does not reach it.
func clientSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// terminate does nothing: Windows has no SIGTERM (clientGracefulStop).
func (c *clientProcess) terminate() {}

// killGroup kills the client (its children are left: Windows has no
// process group to kill).
func (c *clientProcess) killGroup() {
	if c.cmd.Process.Kill() == nil {
		c.killed.Store(true)
	}
}

// exitSignal is "SIGKILL" when killGroup killed the client: its exit
// status (1, TerminateProcess's) does not say so.
func (c *clientProcess) exitSignal() string {
	if c.killed.Load() && !c.cmd.ProcessState.Success() {
		return "SIGKILL"
	}
	return ""
}

// askProbe does nothing: the wrap process it would ask (SIGUSR1) never
// runs on Windows.
func askProbe(int) {}

// processGone reports false: the wrap process it asks about never runs
// on Windows, and the caller waits out its timeout instead.
func processGone(int) bool { return false }
