package suite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync/atomic"
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
	// started, took and stopped are when it started, how long it ran and
	// whether mcpchaos had to stop it (set by await).
	started time.Time
	took    time.Duration
	stopped bool
	// killed is set when killGroup killed the client where its exit
	// status does not say so (Windows: see clientproc_windows.go).
	killed atomic.Bool
}

// startClient starts argv with env and records its start.
func startClient(argv, env []string, record func(wire.Event)) (*clientProcess, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = clientSysProcAttr()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = nil // discarded: the client's results are judged by its exit status
	if err := cmd.Start(); err != nil {
		return nil, &chaos.StartError{Command: argv, Err: err}
	}
	c := &clientProcess{cmd: cmd, pgid: cmd.Process.Pid, record: record, exited: make(chan struct{}),
		stderr: stderr, stderrDone: make(chan struct{}), started: time.Now()}
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
// any) asks the transport for a liveness probe, and the client may run on
// to its hang horizon, where it is asked again: it may be waiting out a
// request timeout of its own. A client still running 2s after the last
// probe (or after the horizon, when it is within 2s of the deadline) gets
// SIGTERM and, after the grace, SIGKILL. Its exit is recorded.
//
// idle, when given, is asked at the deadline whether the client has not
// begun an MCP session at all: such a client waits on no request timeout
// of its own, and is stopped then rather than at the horizon.
func (c *clientProcess) await(ctx context.Context, deadline, hangAfter, grace time.Duration, overdue func(), idle func() bool) {
	killedByUs := false
	probe := func() {
		if overdue != nil {
			overdue()
		}
	}
	// answerWait is how long a probe gets to be answered before the verdict.
	answerWait := min(deadline, 2*time.Second)
	if !c.waitExit(ctx, deadline) {
		if idle != nil && idle() {
			hangAfter = deadline
		}
		probe()
		exited := false
		if rest := hangAfter - deadline; rest > 2*answerWait {
			// Probed again just before the horizon, so that the hang's
			// words say what the client does then.
			if exited = c.waitExit(ctx, rest-answerWait); !exited {
				probe()
			}
		}
		if !exited && !c.waitExit(ctx, answerWait) {
			killedByUs, c.stopped = true, true
			why := "the client program is past its deadline of " + deadline.String()
			if hangAfter > deadline {
				why = "the client program is past its hang horizon of " + hangAfter.String() + " (its deadline was " + deadline.String() + ")"
			}
			switch {
			case !clientGracefulStop:
				// No SIGTERM to ask with (Windows): killed at once.
				c.record(wire.Event{Type: wire.EventSignal, Signal: "SIGKILL", PID: c.pgid, ByUs: true, Detail: why + " (killed at once: this OS has no SIGTERM)"})
				c.killGroup()
				<-c.exited
			default:
				c.record(wire.Event{Type: wire.EventSignal, Signal: "SIGTERM", PID: c.pgid, ByUs: true, Detail: why})
				c.terminate()
				if !c.waitExit(ctx, 2*grace+time.Second) {
					c.record(wire.Event{Type: wire.EventSignal, Signal: "SIGKILL", PID: c.pgid, ByUs: true, Detail: "the client program ignored SIGTERM"})
					c.killGroup()
					<-c.exited
				}
			}
		}
	}
	exit := wire.Event{Type: wire.EventProcessExited, PID: c.pgid}
	if sig := c.exitSignal(); sig != "" {
		exit.Signal = sig
		exit.ByUs = killedByUs
	} else {
		code := c.cmd.ProcessState.ExitCode()
		exit.ExitCode = &code
	}
	c.record(exit)
	c.took = time.Since(c.started)
}

// endWords says how the client program ended, once await returned: "exited
// with status 3 after 12ms", "was stopped after 30s".
func (c *clientProcess) endWords() string {
	ps := c.cmd.ProcessState
	if ps == nil {
		return "had not ended"
	}
	took := c.took.Round(time.Millisecond).String()
	if c.stopped {
		return "was stopped by mcpchaos after " + took
	}
	if sig := c.exitSignal(); sig != "" {
		return "was killed by " + sig + " after " + took
	}
	return fmt.Sprintf("exited with status %d after %s", ps.ExitCode(), took)
}

// finish kills whatever is left of the client's process group and waits
// for its stderr to be read: nothing of the client's outlives its scenario.
func (c *clientProcess) finish() {
	c.killGroup()
	select {
	case <-c.stderrDone:
	case <-time.After(2 * time.Second):
		// Something outside the client's group still holds its stderr;
		// closing our end stops the reader rather than leaving it behind.
		c.stderr.Close()
		<-c.stderrDone
	}
}
