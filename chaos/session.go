package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// DefaultGrace is how long each rung of the shutdown ladder waits: after
// closing the server's stdin, and again after SIGTERM, before SIGKILL.
const DefaultGrace = 3 * time.Second

// drainTimeout bounds how long we read a dead child's pipes: a grandchild that
// escaped the process group could otherwise hold them open for ever.
const drainTimeout = 2 * time.Second

// Config is one stdio session: the server command and how to treat it.
type Config struct {
	Command []string
	// Env is the child's environment; nil means ours.
	Env []string
	// Plan is the fault plan; nil or empty relays untouched.
	Plan *faults.Plan
	// Recorder receives the transcript; nil records nothing.
	Recorder Recorder
	// MaxLine is the longest line classified as a message (DefaultMaxLine if 0).
	MaxLine int
	// Grace is each wait of the shutdown ladder (DefaultGrace if 0).
	Grace time.Duration
	// Share, if set, is the share of a core a process that wants the CPU
	// gets now (machine.Share): the ladder's waits are counted at it, so
	// that a server slowed by its neighbours on a busy machine is given the
	// time to exit it would have had alone (up to five graces on the wall
	// clock). Nil counts wall time.
	Share func() float64
	// Stderr receives the child's stderr as it comes; nil discards it (it is
	// drained and recorded either way).
	Stderr io.Writer
	// Tool names mcpchaos and its version in the transcript.
	Tool string
	// Probes says the caller will send liveness probes (Session.Probe). The
	// relay then learns the session's era from every client frame, so that
	// a probe speaks it, even with no plan and no recorder; without probes,
	// a session with neither passes frames on without reading them.
	Probes bool

	// What the judge needs to know offline, recorded in the session event:
	// the scenario's name, the peer under test ("server", "client" or ""
	// when both are real), the request deadline, and the command line that
	// replays this session.
	Scenario string
	Role     string
	Deadline time.Duration
	// MaxDeadline caps how long progress notifications keep a request
	// alive (0: the judge's default).
	MaxDeadline time.Duration
	// HangAfter is a client program's hang horizon (test-client): see
	// wire.Event.HangAfterMS.
	HangAfter time.Duration
	Repro     string
	// Expect is what a client under test must do: "success" or "failure".
	Expect string
}

// Result is how a session ended.
type Result struct {
	// ExitCode is set when the server exited on its own; Signal when a signal ended it.
	ExitCode *int
	Signal   string
	// SignalledByUs is set when the shutdown ladder had to signal the server.
	SignalledByUs bool
	// Reason says what ended the session, in words.
	Reason string
}

// Run relays one stdio session between a client (clientIn, clientOut) and a
// server started from cfg.Command, until the server has exited. It returns an
// error only when the server could not be started (a *StartError), or on an
// OS without stdio sessions (ErrStdioUnsupported).
//
// Ending: when the client closes its output (EOF on clientIn), ctx is
// cancelled, or an eof fault fires, the shutdown ladder runs: close the
// server's stdin, wait Grace, SIGTERM its process group, wait Grace, SIGKILL.
// When the server exits, its remaining output is relayed, clientOut and
// clientIn are closed (when they are io.Closers) and Run returns.
func Run(ctx context.Context, cfg Config, clientIn io.Reader, clientOut io.Writer) (*Result, error) {
	s, err := Start(ctx, cfg, clientIn, clientOut)
	if err != nil {
		return nil, err
	}
	return s.Wait(), nil
}

// Session is a running stdio session; Start returns it so that the caller can
// send liveness probes while it runs.
type Session struct {
	s      *session
	done   chan struct{}
	result *Result
}

// Start starts the server and relays in the background; see Run.
func Start(ctx context.Context, cfg Config, clientIn io.Reader, clientOut io.Writer) (*Session, error) {
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = DefaultMaxLine
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if err := StdioSupported(); err != nil {
		return nil, err
	}
	if err := CheckPlan(cfg.Plan); err != nil {
		return nil, err
	}
	proc, err := StartProcess(cfg.Command, cfg.Env)
	if err != nil {
		return nil, err
	}
	s := &session{cfg: cfg, rec: cfg.Recorder, plan: cfg.Plan, proc: proc, clientIn: clientIn, done: make(chan struct{})}
	if s.plan != nil && s.plan.Empty() {
		s.plan = nil
	}
	if s.plan != nil {
		// One pump reads each direction: the plan may count most
		// messages without a lock.
		s.plan.Serial()
	}
	s.writers[wire.ToServer] = newEndWriter(proc.Stdin, func() error {
		proc.CloseStdin()
		return nil
	})
	s.writers[wire.ToClient] = newEndWriter(clientOut, closerOf(clientOut))
	s.writers[wire.ToServer].done, s.writers[wire.ToClient].done = s.done, s.done
	for dir := range s.batches {
		s.batches[dir] = make([]wire.Message, 0, classifyBatch)
	}
	s.useClock()
	s.recordStart()
	h := &Session{s: s, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		h.result = s.run(ctx)
	}()
	return h, nil
}

// Wait returns once the server has exited and the session is recorded.
func (h *Session) Wait() *Result {
	<-h.done
	return h.result
}

// Done is closed when the session has ended.
func (h *Session) Done() <-chan struct{} { return h.done }

// Probe sends a liveness probe toward the peer that receives frames
// travelling in dir: ping in the stateful era, server/discover in the
// stateless one (which has no ping). Its answer is recorded and swallowed.
// why goes into the transcript. The session must have been started with
// Config.Probes, or with a plan, for the probe to know the era: a session
// that only records does not read its frames (transcript format 3).
func (h *Session) Probe(dir wire.Direction, why string) {
	h.s.probe(dir, why)
}

type session struct {
	cfg      Config
	rec      Recorder
	plan     *faults.Plan
	proc     *Process
	clientIn io.Reader

	writers [3]*endWriter // indexed by the direction they write in
	// batches, steps and arrivals are the pumps' own, one of each per
	// direction.
	batches  [3][]wire.Message
	steps    [3]faults.Step
	arrivals [3]arrivalClock
	gates    [3]stallGate
	// halfClosed marks a direction whose read end a fault closed, so its
	// pump's read error is not mistaken for the peer going away.
	halfClosed [3]atomic.Bool
	// holds are the frames reorder faults keep back (shape.go).
	holds holds
	// midLine marks a direction in the middle of relaying an over-long line
	// in pieces, when no other frame may be written into it.
	midLine [3]atomic.Bool

	done       chan struct{} // closed once the server has exited
	ladderOnce sync.Once
	signalled  atomic.Bool
	// background counts the goroutines that act on the session from the
	// side (the shutdown ladder, a STOP's resume, a linger's end): the
	// session ends only once they have, so none records after its end.
	background   sync.WaitGroup
	backgroundMu sync.Mutex
	ended        bool

	era    atomic.Uint32 // wire.Era of the session, once a frame says
	probes atomic.Int64  // liveness probes sent so far
	// injectedBy maps the id of each request a fault injected to the
	// fault's label, so that the answer is swallowed with a reason.
	injectedBy sync.Map
	// injectedAny says injectedBy holds an id: until a fault injects a
	// request, no frame can be the answer to one, and a frame the plan does
	// not watch need not be searched for the injected ids' prefix.
	injectedAny atomic.Bool

	// The process-level faults (procfaults.go): a stopped server, stderr
	// floods in progress, a linger.
	stop   stopState
	floods floodSet
	linger lingerState
}

func closerOf(v any) func() error {
	if c, ok := v.(io.Closer); ok {
		return c.Close
	}
	return nil
}

func (s *session) run(ctx context.Context) *Result {
	c2s := make(chan error, 1)
	s2c := make(chan error, 1)
	stderrDone := make(chan struct{})
	go func() { c2s <- s.pump(wire.ToServer, s.clientIn) }()
	go func() { s2c <- s.pump(wire.ToClient, s.proc.Stdout) }()
	go func() { s.drainStderr(); close(stderrDone) }()

	res := &Result{}
	c2sRunning, s2cRunning := true, true
	for ended := false; !ended; {
		select {
		case <-s.proc.Done():
			ended = true
			if res.Reason == "" {
				res.Reason = "the server exited"
			}
		case err := <-c2s:
			c2sRunning = false
			if !s.halfClosed[wire.ToServer].Load() {
				res.Reason = "the client closed its output"
				if err != nil && !errors.Is(err, io.EOF) {
					res.Reason = "reading from the client failed: " + err.Error()
				}
				if !s.postpone(res.Reason) {
					s.shutdown(res.Reason)
				}
			}
		case <-s2c:
			// Nothing more can reach the client (the server closed its
			// output, or a fault closed our read end of it): say so with
			// EOF, as a direct pipe would, rather than leave it waiting.
			s2cRunning = false
			s.flush(wire.ToClient)
			s.writers[wire.ToClient].closeRecorded(func() {
				s.recordPipe(wire.PipeClientOutput, "nothing more can come from the server: its output ended", true)
			})
		case <-ctx.Done():
			res.Reason = "interrupted"
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				res.Reason = "interrupted: " + cause.Error()
			}
			s.shutdown(res.Reason)
			ctx = context.Background() // fire once
		}
	}
	close(s.done) // releases stalls and injection gaps
	s.floods.end()
	s.endBackground()

	// The server is gone; anything left in its group would hold the pipes open.
	if s.proc.SignalGroup(syscall.SIGKILL) {
		s.recordSignal("SIGKILL", wire.GroupCleanupDetail)
	}
	if s2cRunning {
		s.awaitOrClose(s2c, s.proc.Stdout)
	}
	// Frames still held by reorder faults go out now if they still can.
	s.releaseAllHeld()
	s.awaitDone(stderrDone, s.proc.Stderr)
	res.ExitCode, res.Signal = s.proc.Exit()
	res.SignalledByUs = s.signalled.Load()
	s.recordExit(res)

	s.writers[wire.ToServer].close()
	s.writers[wire.ToClient].closeRecorded(func() {
		s.recordPipe(wire.PipeClientOutput, "the server exited", true)
	})
	if c2sRunning {
		// Closing a pollable pipe wakes the pump at once. A blocking stdin
		// (a terminal, an inherited blocking pipe) cannot be woken; its pump
		// ends with the process, so waiting longer would only delay exit.
		// A reader that cannot be closed (an io.Reader handed to Start)
		// gets the same short wait: it has usually reached its end, and its
		// end belongs in the record before the session's.
		if c := closerOf(s.clientIn); c != nil {
			_ = c()
		}
		waitAtMost(c2s, 200*time.Millisecond)
	}
	s.record(wire.Event{Type: wire.EventSessionEnd, Detail: res.Reason})
	return res
}

// awaitOrClose waits for a pump to finish, closing its source after
// drainTimeout if it has not.
func (s *session) awaitOrClose(done <-chan error, src *os.File) {
	t := time.NewTimer(drainTimeout)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	if src != nil {
		src.Close()
		<-done
	}
}

func (s *session) awaitDone(done <-chan struct{}, src *os.File) {
	awaitDone(done, src)
}

// awaitDone waits for the reader of src to finish, closing src under it
// if it has not within drainTimeout: a grandchild holding the pipe open
// must not hold the run.
func awaitDone(done <-chan struct{}, src *os.File) {
	t := time.NewTimer(drainTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		src.Close()
		<-done
	}
}

// shutdown starts the stdio shutdown ladder once; it runs until the server
// has exited.
func (s *session) shutdown(why string) {
	s.ladderOnce.Do(func() { s.goBackground(func() { s.ladder(why) }) })
}

// goBackground runs f in a goroutine the session's end waits for; once the
// session has ended it does nothing. f must return soon after s.done closes.
func (s *session) goBackground(f func()) {
	s.backgroundMu.Lock()
	defer s.backgroundMu.Unlock()
	if s.ended {
		return
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		f()
	}()
}

// endBackground waits for the goroutines goBackground started, and starts no
// more. Called once the server has exited, so the ladder's waits are over.
func (s *session) endBackground() {
	s.backgroundMu.Lock()
	s.ended = true
	s.backgroundMu.Unlock()
	s.background.Wait()
}

func (s *session) ladder(why string) {
	// A server a signal fault stopped could not act on its stdin closing
	// nor on SIGTERM: continue it first, and again before each rung in case
	// a later fault stopped it anew.
	s.resume("the shutdown ladder starts: " + why)
	s.writers[wire.ToServer].closeRecorded(func() {
		s.recordPipe(wire.PipeServerInput, why, true)
	})
	wait := func() bool { return s.proc.waitExitCounted(s.cfg.Grace, s.cfg.Share) }
	if wait() {
		return
	}
	s.signalled.Store(true)
	s.resume("the shutdown ladder is about to send SIGTERM")
	s.recordSignal("SIGTERM", fmt.Sprintf("the server did not exit within %s of its stdin closing", s.cfg.Grace))
	s.proc.SignalGroup(syscall.SIGTERM)
	if wait() {
		return
	}
	s.resume("the shutdown ladder is about to send SIGKILL")
	s.recordSignal("SIGKILL", fmt.Sprintf("the server did not exit within %s of SIGTERM", s.cfg.Grace))
	s.proc.SignalGroup(syscall.SIGKILL)
}

// drainStderr reads the server's stderr to its end, so the server can never
// block on it, recording each line and passing it through.
func (s *session) drainStderr() {
	drainLog(s.proc.Stderr, s.rec, s.cfg.Stderr, "")
}

// drainLog records each line of a log stream as a stderr event; pipe
// names it when it is not stderr.
func drainLog(r io.Reader, rec Recorder, pass io.Writer, pipe string) {
	lr := newLineReader(r, 64<<10, nil)
	for {
		f, err := lr.next()
		if len(f.raw) > 0 {
			if rec != nil {
				e := wire.Event{Type: wire.EventStderr, Pipe: pipe}
				e.SetRaw(f.raw)
				rec.Record(e)
			}
			if pass != nil {
				_, _ = pass.Write(f.raw)
			}
		}
		if err != nil {
			return
		}
	}
}

// CheckPlan refuses a plan holding a fault that exists only on HTTP: a
// status, a reset connection or a session DELETE has no stdio meaning.
func CheckPlan(plan *faults.Plan) error {
	if plan == nil {
		return nil
	}
	for _, f := range plan.Faults() {
		if f.Family.HTTPOnly {
			return fmt.Errorf("--fault %s: fault %s works only on HTTP (mcpchaos proxy, test --url, test-client --server-url); over stdio there is no HTTP request to answer", f.Spec, f.Family.Name)
		}
		if ps := f.HTTPParams(); len(ps) > 0 {
			return fmt.Errorf("--fault %s: %s= means something on HTTP only (mcpchaos proxy, test --url, test-client --server-url); over stdio there is no event stream or connection to point it at: leave it out", f.Spec, ps[0])
		}
	}
	return nil
}
