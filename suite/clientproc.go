package suite

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/wire"
)

// clientProcess is a client program under test-client: started in a process
// group of its own, its stderr recorded line by line, ended by the deadline
// ladder when it does not end by itself. What happens to it is recorded
// through record, with peer "client", whatever the transport.
type clientProcess struct {
	cmd        *exec.Cmd
	pgid       int
	record     func(wire.Event)
	exited     chan struct{}
	stderr     io.ReadCloser
	stderrDone chan struct{}
}

// startClient starts argv with env and records its start.
func startClient(argv, env []string, record func(wire.Event)) (*clientProcess, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = nil // discarded: the client's results are judged by its exit status
	if err := cmd.Start(); err != nil {
		return nil, &chaos.StartError{Command: argv, Err: err}
	}
	c := &clientProcess{cmd: cmd, pgid: cmd.Process.Pid, record: record, exited: make(chan struct{}),
		stderr: stderr, stderrDone: make(chan struct{})}
	record(wire.Event{Type: wire.EventProcessStarted, PID: c.pgid, Command: argv})
	go func() {
		defer close(c.stderrDone)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			e := wire.Event{Type: wire.EventStderr}
			e.SetRaw(append(sc.Bytes(), '\n'))
			record(e)
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// waitExit waits d for the client to exit; false when it did not, or ctx
// ended first.
func (c *clientProcess) waitExit(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// await waits for the client to exit by its deadline. Past it, overdue (if
// any) gets 2s to ask the transport for a liveness probe; then the client's
// group gets SIGTERM and, after the grace, SIGKILL. Its exit is recorded.
func (c *clientProcess) await(ctx context.Context, deadline, grace time.Duration, overdue func()) {
	killedByUs := false
	if !c.waitExit(ctx, deadline) {
		if overdue != nil {
			overdue()
		}
		if !c.waitExit(ctx, min(deadline, 2*time.Second)) {
			killedByUs = true
			c.record(wire.Event{Type: wire.EventSignal, Signal: "SIGTERM", PID: c.pgid, ByUs: true, Detail: "the client program is past its deadline of " + deadline.String()})
			_ = syscall.Kill(c.pgid, syscall.SIGTERM)
			if !c.waitExit(ctx, 2*grace+time.Second) {
				c.record(wire.Event{Type: wire.EventSignal, Signal: "SIGKILL", PID: c.pgid, ByUs: true, Detail: "the client program ignored SIGTERM"})
				_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
				<-c.exited
			}
		}
	}
	exit := wire.Event{Type: wire.EventProcessExited, PID: c.pgid}
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		exit.Signal = chaos.SignalName(ws.Signal())
		exit.ByUs = killedByUs
	} else {
		code := c.cmd.ProcessState.ExitCode()
		exit.ExitCode = &code
	}
	c.record(exit)
}

// finish kills whatever is left of the client's process group and waits
// for its stderr to be read: nothing of the client's outlives its scenario.
func (c *clientProcess) finish() {
	_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
	select {
	case <-c.stderrDone:
	case <-time.After(2 * time.Second):
		// Something outside the client's group still holds its stderr;
		// closing our end stops the reader rather than leaving it behind.
		c.stderr.Close()
		<-c.stderrDone
	}
}
