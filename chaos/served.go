package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// ServedConfig says how to run a server that is reached over the network
// (an HTTP MCP server) rather than through its stdio.
type ServedConfig struct {
	Command []string
	// Env is the child's environment; nil means ours.
	Env      []string
	Recorder Recorder
	// Grace is each wait of the shutdown ladder (default 3s).
	Grace time.Duration
	// Stderr, if set, receives a copy of the server's stderr.
	Stderr io.Writer
}

// Served is a network server under test: its own process group, its stderr
// drained into the record (crash signatures are judged from it), and a
// shutdown ladder of SIGTERM then SIGKILL, since such a server has no stdin
// whose end asks it to stop.
type Served struct {
	cfg        ServedConfig
	proc       *Process
	stderrDone chan struct{}
	stdoutDone chan struct{}
	stopOnce   sync.Once
	// watchDone is closed once watch has returned.
	watchDone chan struct{}
	// exitMu guards stopping (Stop has begun, and records the exit) and
	// exitRecorded (watch recorded an exit the server made on its own).
	exitMu       sync.Mutex
	stopping     bool
	exitRecorded bool
}

// StartServed starts cfg.Command and records its start.
func StartServed(cfg ServedConfig) (*Served, error) {
	if cfg.Grace <= 0 {
		cfg.Grace = 3 * time.Second
	}
	proc, err := StartProcess(cfg.Command, cfg.Env)
	if err != nil {
		return nil, err
	}
	s := &Served{cfg: cfg, proc: proc, stderrDone: make(chan struct{}), stdoutDone: make(chan struct{}), watchDone: make(chan struct{})}
	s.record(wire.Event{Type: wire.EventProcessStarted, PID: proc.PID(), Command: cfg.Command})
	go func() {
		defer close(s.stderrDone)
		drainLog(proc.Stderr, cfg.Recorder, cfg.Stderr, "")
	}()
	// Its stdout carries no messages, only logs (a traceback printed there
	// is as much a crash signature): recorded the same way, named.
	go func() {
		defer close(s.stdoutDone)
		drainLog(proc.Stdout, cfg.Recorder, cfg.Stderr, wire.PipeServerOutput)
	}()
	go s.watch()
	return s, nil
}

// watch records the server's exit when it exits on its own, at that
// moment. Recorded only when Stop ended it, a server that crashed a few
// milliseconds into the session looked alive until the end: the requests
// sent to it after were judged hung, its silence a stuck receive loop.
func (s *Served) watch() {
	defer close(s.watchDone)
	<-s.proc.Done()
	if s.isStopping() {
		return
	}
	// The crash's last lines of output go before the exit, if they come
	// soon: a child left in the group may hold the pipes open.
	waitAtMost(s.stderrDone, exitDrain)
	waitAtMost(s.stdoutDone, exitDrain)
	s.exitMu.Lock()
	defer s.exitMu.Unlock()
	if s.stopping {
		return
	}
	s.exitRecorded = true
	code, sig := s.proc.Exit()
	s.record(wire.Event{Type: wire.EventProcessExited, PID: s.proc.PID(), ExitCode: code, Signal: sig})
}

// exitDrain bounds how long watch waits for the output of a server that
// exited before it records the exit.
const exitDrain = 500 * time.Millisecond

func (s *Served) isStopping() bool {
	s.exitMu.Lock()
	defer s.exitMu.Unlock()
	return s.stopping
}

func (s *Served) record(e wire.Event) {
	if s.cfg.Recorder != nil {
		s.cfg.Recorder.Record(e)
	}
}

// Done is closed once the server has exited.
func (s *Served) Done() <-chan struct{} { return s.proc.Done() }

// PID is the server's process id.
func (s *Served) PID() int { return s.proc.PID() }

// ErrExited is wrapped by WaitListening's error when the server exited
// before it listened.
var ErrExited = errors.New("the server exited")

// WaitListening waits, up to timeout, until addr (host:port) accepts a TCP
// connection: a server started a moment ago is not listening yet. It fails
// at once if the server exits first.
func (s *Served) WaitListening(ctx context.Context, addr string, timeout time.Duration) error {
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wait := 20 * time.Millisecond
	for {
		d := net.Dialer{Timeout: time.Second}
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-s.proc.Done():
			t.Stop()
			code, sig := s.proc.Exit()
			how := sig
			if code != nil {
				how = fmt.Sprintf("status %d", *code)
			}
			return fmt.Errorf("%w (%s) before it listened on %s", ErrExited, how, addr)
		case <-ctx.Done():
			t.Stop()
			if outer.Err() != nil {
				// The run's own time ran out, not the wait's.
				return fmt.Errorf("the run ended while waiting for the server to listen on %s: %w", addr, context.Cause(outer))
			}
			if context.Cause(ctx) == context.DeadlineExceeded {
				return fmt.Errorf("nothing listened on %s within %s of starting the server (is the URL's port the one it serves on?)", addr, timeout)
			}
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, 250*time.Millisecond)
	}
}

// Stop ends the server, unless it has already exited: SIGTERM, then SIGKILL
// if it is still running after Grace; then whatever is left in its group is
// killed, its stderr drained, and its exit recorded. why says what ended
// the session. Stop returns once the server is gone; calling it again does
// nothing. Where there is no SIGTERM (Windows), the server is killed at once.
func (s *Served) Stop(why string) {
	s.stopOnce.Do(func() { s.stop(why) })
}

func (s *Served) stop(why string) {
	s.exitMu.Lock()
	s.stopping = true
	s.exitMu.Unlock()
	var signalled bool
	select {
	case <-s.proc.Done():
	default:
		signalled = true
		if !gracefulStop {
			// No SIGTERM to ask with (Windows): killed at once.
			s.signal(syscall.SIGKILL, "the server is stopped: "+why+" (killed at once: this OS has no SIGTERM)")
			<-s.proc.Done()
			break
		}
		s.signal(syscall.SIGTERM, "the server is stopped: "+why)
		if !s.proc.waitExit(s.cfg.Grace) {
			s.signal(syscall.SIGKILL, fmt.Sprintf("the server did not exit within %s of SIGTERM", s.cfg.Grace))
			<-s.proc.Done() // SIGKILL cannot be caught: the wait is the kernel's

		}
	}
	if s.proc.SignalGroup(syscall.SIGKILL) {
		s.record(wire.Event{Type: wire.EventSignal, Signal: "SIGKILL", PID: s.proc.PID(), Detail: wire.GroupCleanupDetail, ByUs: true})
	}
	awaitDone(s.stderrDone, s.proc.Stderr)
	awaitDone(s.stdoutDone, s.proc.Stdout)
	s.proc.CloseStdin()
	<-s.watchDone // the process is gone, so it returns
	if s.exitRecorded {
		return
	}
	code, sig := s.proc.Exit()
	s.record(wire.Event{Type: wire.EventProcessExited, PID: s.proc.PID(), ExitCode: code, Signal: sig, ByUs: signalled && sig != ""})
}

func (s *Served) signal(sig syscall.Signal, why string) { s.signalAs(sig, why, "") }

// signalAs records and sends sig, for fault when a fault sends it; it
// reports whether any process was left to get it.
func (s *Served) signalAs(sig syscall.Signal, why, fault string) bool {
	s.record(wire.Event{Type: wire.EventSignal, Signal: SignalName(sig), PID: s.proc.PID(), Detail: why, Fault: fault, ByUs: true})
	return s.proc.SignalGroup(sig)
}

// CanSignal says why a signal fault cannot send name to a served server,
// "" when it can. A STOP is not offered: over HTTP its window, in which the
// server's silence is excused, would be known only to the session whose
// fault froze it, and every session would be judged hung.
func (s *Served) CanSignal(name string) string {
	if _, ok := faultSignals[name]; !ok {
		return name + " cannot be sent on this OS"
	}
	if name == "SIGSTOP" {
		return "a STOP is not sent to an HTTP server: the other sessions could not tell its window from a hang"
	}
	return ""
}

// Signal sends a signal fault's signal to the server's process group. The
// signal event carries the fault's label: in a run of several sessions the
// event is in every session's record, the fault's decision only in the
// struck one's, and each session's judge must know the signal for a
// fault's, not the shutdown ladder's.
// The caller has asked CanSignal first.
func (s *Served) Signal(name, label string) {
	if !s.signalAs(faultSignals[name], "fault "+label, label) {
		s.record(wire.Event{Type: wire.EventError, Signal: name, Detail: "the server's process group is gone: " + name + " reached no process"})
	}
}
