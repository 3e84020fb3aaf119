package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// bigFrame is the size from which a frame is collected as soon as it is
// relayed (see pump).
const bigFrame = 8 << 20

// pump relays one direction until its source ends, and returns the read error.
func (s *session) pump(dir wire.Direction, src io.Reader) error {
	if s.unframed(dir) {
		if done, err := s.splice(dir, src); done {
			s.recordPipe(sourcePipe(dir), describeEnd(err), false)
			return err
		}
	}
	maxLine := s.cfg.MaxLine
	if s.unframed(dir) {
		// Nothing reads a frame whole: a long line goes on in pieces as
		// they come, so that its size costs no memory.
		maxLine = readBuffer
	}
	idle, _ := s.rec.(idleFlusher)
	lr := newLineReader(src, maxLine, func() {
		// About to read, and maybe to wait: nothing queued waits on a
		// peer, and the frames borrowed from the buffer are written
		// before it is reused.
		s.flush(dir)
		if idle != nil {
			idle.flushIdle()
		}
	})
	lr.afterRead = func() { s.arrivals[dir].left = 0 }
	for {
		// The whole lines of one read come as one run: they arrived
		// together, and go on together (see handle).
		f, err := lr.run()
		if len(f.raw) > 0 {
			s.handle(dir, f)
		}
		if len(f.raw) >= bigFrame {
			// The frame's copies (joined, recorded, encoded) are garbage
			// now. Left to the pacer, a few such frames in a row grew the
			// heap to several times their size; collected at once, the
			// heap stays near one frame's worth. One collection per 8 MiB
			// relayed costs little.
			runtime.GC()
		}
		if err != nil {
			s.releaseHeld(dir, "as nothing more comes from the "+sender(dir))
			if !s.halfClosed[dir].Load() {
				s.recordPipe(sourcePipe(dir), describeEnd(err), false)
			}
			return err
		}
	}
}

func describeEnd(err error) string {
	if errors.Is(err, io.EOF) {
		return "end of file"
	}
	if errors.Is(err, os.ErrClosed) {
		return "closed by mcpchaos"
	}
	return err.Error()
}

func (s *session) handle(dir wire.Direction, f frame) {
	if f.part > 0 {
		s.handlePiece(dir, f)
		return
	}
	if s.passThrough() || s.unwatched(dir, f.raw) {
		s.forwardFrame(dir, f.raw, 0, "")
		return
	}
	if s.unread() {
		if _, ok := s.forwardPaired(dir, f.raw, countFrames(f.raw)); ok {
			return
		}
	}
	// One frame at a time from here, each classified: the frames of the
	// run are classified a batch at a time before they are handled, which
	// keeps the classifier's code and data hot (it cost a third more when
	// it took turns with the plan and the writer frame by frame).
	batch := s.batches[dir][:0]
	for rest := f.raw; len(rest) > 0; {
		end := bytes.IndexByte(rest, '\n') + 1
		if end == 0 {
			end = len(rest)
		}
		batch = append(batch, wire.Classify(rest[:end]))
		rest = rest[end:]
		if len(batch) == cap(batch) || len(rest) == 0 {
			for i := range batch {
				s.handleFrame(dir, &batch[i])
			}
			// Handled: a long line the batch holds is garbage now.
			clear(batch)
			batch = batch[:0]
		}
	}
}

// classifyBatch is how many frames of a run are classified before they are
// handled: enough to keep the classifier hot, few enough that a run of
// empty lines does not make a batch of megabytes.
const classifyBatch = 64

// countFrames is how many frames raw, one or more whole lines but for the
// unterminated end of a stream, holds.
func countFrames(raw []byte) int {
	n := bytes.Count(raw, []byte{'\n'})
	if raw[len(raw)-1] != '\n' {
		n++
	}
	return n
}

// handleFrame relays one frame, m, as the plan and the session say. One
// pump reads each direction, so each reuses its batch of Messages and one
// Step: nothing keeps them past this call.
func (s *session) handleFrame(dir wire.Direction, m *wire.Message) {
	if dir == wire.ToServer && m.Era != wire.EraUnknown {
		// The latest word wins: a client may try server/discover and fall
		// back to initialize.
		s.era.Store(uint32(m.Era))
	}
	if m.IsAnswer() && strings.HasPrefix(m.ID, wire.ProbeIDPrefix) {
		seq := s.recordMessage(wire.EventReceived, dir, m, "", 0)
		s.recordRef(wire.EventDropped, dir, seq, "the answer to a liveness probe of mcpchaos")
		return
	}
	if m.IsAnswer() && strings.HasPrefix(m.ID, wire.InjectIDPrefix) {
		// The other peer never asked: it must not see the answer.
		seq := s.recordMessage(wire.EventReceived, dir, m, "", 0)
		label := "of mcpchaos"
		if l, ok := s.injectedBy.Load(m.ID); ok {
			label = "by fault " + l.(string)
		}
		s.recordRef(wire.EventDropped, dir, seq, "the answer to a request injected "+label)
		return
	}
	if s.plan == nil {
		if _, ok := s.forwardPaired(dir, m.Raw, 1); !ok {
			s.arrivals[dir].left = 0 // the long way may wait
			s.forwardFrame(dir, m.Raw, s.recordMessage(wire.EventReceived, dir, m, "", 0), "")
		}
		return
	}
	step := &s.steps[dir]
	s.plan.ReceiveInto(step, dir, m)
	// The plan decides before the frame is recorded, so that a frame no
	// fault touches is recorded with its forwarding in one turn.
	firings := s.plan.Decide(faults.Before, step)
	if len(firings) == 0 && step.Rewritten == nil && step.RewriteNote == "" && !s.holding() {
		if seq, ok := s.forwardPaired(dir, m.Raw, 1); ok {
			s.afterForward(dir, m, step, seq)
			return
		}
		if s.rec == nil {
			// What the long way below comes to for a frame no fault
			// touches, nothing records and nothing held can join.
			s.forwardFrame(dir, m.Raw, 0, "")
			s.afterForward(dir, m, step, 0)
			return
		}
	}
	s.arrivals[dir].left = 0 // the long way may wait
	seq := s.recordMessage(wire.EventReceived, dir, m, "", 0)
	o := s.apply(firings, dir, m.Raw, seq, false)
	// An id fault's rewrite, or an answer translated back to the id its
	// request's sender gave, goes on instead of the bytes received.
	raw, note, received := m.Raw, step.RewriteNote, true
	if step.Rewritten != nil {
		raw, received = step.Rewritten, false
	}
	if o.Rewrite != nil {
		raw, note, received = o.Rewrite, "rewritten by fault "+o.RewriteBy, false
	}
	switch {
	case o.Dropped != "":
		s.recordRef(wire.EventDropped, dir, seq, o.Dropped)
	case o.ReplaceBy != "":
		s.recordRef(wire.EventDropped, dir, seq, "replaced by fault "+o.ReplaceBy)
		s.inject(o.ReplaceBy, faults.Injection{Dir: dir, Raw: o.Replace}, seq)
	case o.Hold != nil && s.hold(o.HoldBy, o.Hold, dir, raw, seq, o.Copies):
		// Held back by reorder; released later (shape.go).
	case s.holdWith(dir, m, seq):
		// More progress for a token whose progress is held until its answer.
	default:
		switch {
		case o.Fragment != nil:
			s.forwardPieces(dir, raw, seq, o.Fragment)
		case received:
			s.forwardFrame(dir, raw, seq, note)
		default:
			s.forwardAs(dir, raw, seq, note)
		}
		// After the forwarded event, as the plan heard of every answer
		// before its received event (faults/landing.go).
		s.missed(s.plan.Delivered(step, seq))
		for range o.Copies {
			s.forwardAs(dir, raw, seq, note)
		}
		s.releaseAfter(dir, m, seq)
	}
	for _, inj := range o.After {
		s.inject(inj.Label, inj.Injection, seq)
	}
	s.decideAfter(dir, m, step, seq)
}

// missed records the firings of the plan that did not land (faults.Miss).
func (s *session) missed(ms []faults.Miss) {
	if s.rec == nil {
		return
	}
	for _, m := range ms {
		s.rec.Record(wire.Event{Type: wire.EventFault, Fault: m.Label, Spec: m.Fault.Spec, Action: m.Fault.Family.Name, Detail: m.Detail, Of: m.Of})
	}
}

// afterForward does what follows the forwarding of m (of seq) that no
// fault touched: the holds waiting for it are released, and the faults
// that act after a frame decide.
func (s *session) afterForward(dir wire.Direction, m *wire.Message, step *faults.Step, seq int64) {
	s.releaseAfter(dir, m, seq)
	s.decideAfter(dir, m, step, seq)
}

func (s *session) decideAfter(dir wire.Direction, m *wire.Message, step *faults.Step, seq int64) {
	if after := s.plan.Decide(faults.After, step); len(after) > 0 {
		s.arrivals[dir].left = 0 // what they do may wait
		s.flush(dir)             // "after forwarding" means the peer can read it
		s.apply(after, dir, m.Raw, seq, true)
	}
}

// forwardPaired forwards the n frames in raw the pump of dir has just read,
// which no fault touches, recording each one's received and forwarded
// events as one pair when the recorder can: the forwarded events go in
// before the frames reach the writer, as they do for every frame a flush
// carries later, and a write that fails records the frames dropped after
// them, as for those. It reports false, having done nothing, when the
// frames must go the long way: no pair recorder, or a closed or stalled
// pipe.
func (s *session) forwardPaired(dir wire.Direction, raw []byte, n int) (seq int64, ok bool) {
	pr, ok := s.rec.(pairRecorder)
	if !ok || s.writers[dir].closed.Load() || s.gates[dir].stalled() {
		return 0, false
	}
	seq = pr.RecordForwarded(dir, raw, n, s.arrival(dir))
	if lost, err := s.writers[dir].putFrames(raw, seq, n); err != nil {
		s.writeFailed(dir, lost, err)
	}
	return seq, true
}

// arrivalClock is the time a pump stamps the frames it relays untouched,
// read once for many of them: reading the clock cost as much as the rest
// of recording a frame. The time is the latest read's (when the frame
// arrived whole), read again after every arrivalReuse frames, and after
// anything but the relay of an untouched frame (which may have waited:
// a fault, a stall, a blocked write).
type arrivalClock struct {
	at   int64
	left int // frames that may still use at
}

const arrivalReuse = 256

// arrival is the time to record the frame the pump of dir relays now. Only
// that pump may call it.
func (s *session) arrival(dir wire.Direction) int64 {
	c := &s.arrivals[dir]
	if c.left == 0 {
		c.at, c.left = s.rec.Now(), arrivalReuse
	}
	c.left--
	return c.at
}

// splice relays dir without the bytes entering our memory, when both of its
// ends are OS files (see spliceCopy). done says it relayed all there was;
// otherwise the pump goes on the ordinary way.
func (s *session) splice(dir wire.Direction, src io.Reader) (done bool, err error) {
	in, ok := src.(*os.File)
	if !ok {
		return false, nil
	}
	out, ok := s.writers[dir].w.(*os.File)
	if !ok {
		return false, nil
	}
	return spliceCopy(out, in)
}

// passThrough reports whether frames can be forwarded without reading what
// they are: with no fault, no record and no liveness probe, nothing depends
// on what a frame is. This is what makes a bare wrap cost close to a pipe.
func (s *session) passThrough() bool {
	return s.rec == nil && s.plan == nil && !s.cfg.Probes
}

// unframed reports whether dir can be relayed as bytes, never cut into
// frames: nothing depends on what a frame is (passThrough), or nothing is
// recorded or probed and the plan cannot reach dir (its faults neither
// watch dir nor act beyond the message that fired them). A plan that
// watches only the client's requests then costs the server's answers
// nothing.
func (s *session) unframed(dir wire.Direction) bool {
	return s.passThrough() || (s.rec == nil && !s.cfg.Probes && s.plan != nil && !s.plan.Reaches(dir))
}

// unwatched reports whether raw, travelling in dir, can be forwarded without
// reading what it is although a plan is in force: nothing is recorded or
// probed, the plan does not watch dir, and raw cannot be the answer to a
// request a fault injected (which must be swallowed).
func (s *session) unwatched(dir wire.Direction, raw []byte) bool {
	return s.rec == nil && !s.cfg.Probes && s.plan != nil && !s.plan.Watches(dir) &&
		!(s.injectedAny.Load() && bytes.Contains(raw, injectIDPrefix))
}

var injectIDPrefix = []byte(wire.InjectIDPrefix)

// unread reports whether the frames of the session can be recorded and
// forwarded without reading what they are: no plan weighs them (nor
// injects requests whose answers would be swallowed), and no liveness
// probe needs the era they say or has been sent, whose answer would be. The
// transcript then holds each frame as it came, and its reader classifies
// it (transcript format 3).
func (s *session) unread() bool {
	return s.plan == nil && !s.cfg.Probes && s.probes.Load() == 0
}

// handlePiece relays a piece of a line longer than MaxLine unclassified and
// untouched by faults, recording its bytes so nothing is lost from the record.
func (s *session) handlePiece(dir wire.Direction, f frame) {
	var seq int64
	if s.rec != nil {
		if f.part == 1 {
			s.rec.Record(wire.Event{Type: wire.EventError, Dir: dir.String(), Detail: fmt.Sprintf("a line from the %s is longer than the %d-byte cap (--max-line); it is relayed unchanged in pieces, without classification or faults", sender(dir), s.cfg.MaxLine)})
		}
		m := wire.Message{Raw: f.raw, Problem: fmt.Sprintf("line longer than the %d-byte cap, piece %d", s.cfg.MaxLine, f.part)}
		seq = s.recordMessage(wire.EventReceived, dir, &m, "", 0)
	}
	// Until the line's last piece is written, nothing else may be.
	s.midLine[dir].Store(!bytes.HasSuffix(f.raw, []byte("\n")))
	s.forward(dir, f.raw, seq)
}

// forward writes a received frame on, unless a stall outlives the session or
// the pipe is closed, in which case the frame is recorded as dropped.
func (s *session) forward(dir wire.Direction, raw []byte, seq int64) {
	s.forwardAs(dir, raw, seq, "")
}

// forwardAs is forward for a frame that may have been rewritten on its way:
// with a note, the forwarded event records the bytes written and says why,
// so that the transcript holds what each peer got.
func (s *session) forwardAs(dir wire.Direction, raw []byte, seq int64, note string) {
	s.forwardOn(dir, raw, seq, note, false)
}

// forwardFrame is forwardAs for the frame the pump of dir has just read,
// which the writer may take from the pump's buffer without copying it.
// Only that pump may call it.
func (s *session) forwardFrame(dir wire.Direction, raw []byte, seq int64, note string) {
	s.forwardOn(dir, raw, seq, note, true)
}

func (s *session) forwardOn(dir wire.Direction, raw []byte, seq int64, note string, borrowed bool) {
	if s.gates[dir].stalled() {
		s.flush(dir) // what came before the stall is not held by it
		if !s.gates[dir].wait(s.done) {
			s.recordRef(wire.EventDropped, dir, seq, "the session ended while this direction was stalled")
			return
		}
	}
	w := s.writers[dir]
	put := w.put
	if borrowed {
		put = w.putFrame
	}
	if lost, err := put(raw, seq); err != nil {
		s.writeFailed(dir, lost, err)
		return
	}
	if note == "" {
		s.recordRef(wire.EventForwarded, dir, seq, "")
		return
	}
	if s.rec != nil {
		m := wire.Classify(raw)
		e := wire.Event{Type: wire.EventForwarded, Of: seq, Detail: note}
		e.SetMessage(dir, &m)
		s.rec.Record(e)
	}
}

func (s *session) flush(dir wire.Direction) {
	if lost, err := s.writers[dir].flush(); err != nil {
		s.writeFailed(dir, lost, err)
	}
}

// writeFailed records the frames a failed write lost. Frames already recorded
// as forwarded but still in the buffer are recorded as dropped after it.
func (s *session) writeFailed(dir wire.Direction, lost []int64, err error) {
	reason := fmt.Sprintf("the %s pipe is closed", sinkPipe(dir))
	if !errors.Is(err, errPipeClosed) {
		reason = fmt.Sprintf("writing to %s failed: %v", sinkPipe(dir), err)
		if s.rec != nil {
			s.rec.Record(wire.Event{Type: wire.EventError, Dir: dir.String(), Pipe: sinkPipe(dir), Detail: reason})
		}
		if dir == wire.ToClient {
			s.shutdown("the client stopped reading its input")
		}
	}
	for _, seq := range lost {
		if seq != 0 {
			s.recordRef(wire.EventDropped, dir, seq, reason)
		}
	}
}

// apply carries out what fired faults decided, in plan order. raw is the
// triggering message, travelling in dir; forwarded says it has been forwarded
// already, so its copies are written at once rather than after it.
func (s *session) apply(firings []faults.Firing, dir wire.Direction, raw []byte, cause int64, forwarded bool) faults.Fate {
	var o faults.Fate
	for _, f := range firings {
		e := f.Effect
		if s.rec != nil {
			ev := wire.Event{Type: wire.EventFault, Fault: f.Label, Action: f.Fault.Family.Name, Detail: e.Detail, Of: cause, Spec: f.Fault.Spec}
			if t := e.Throttle; t != nil {
				ev.Dir = t.Dir.String()
			}
			if e.Rewrite != nil && !forwarded {
				// The id the receiver gets, before it can answer to it.
				m := wire.Classify(e.Rewrite)
				ev.Dir, ev.ID = dir.String(), m.ID
			}
			if st := e.Stall; st != nil {
				// The judge needs the held window to excuse what it delayed.
				ev.Dir, ev.Forever = st.Dir.String(), st.For == 0
				if st.For > 0 {
					ev.UntilUS = s.rec.Now() + st.For.Microseconds()
				}
			}
			s.heldWindow(&ev, e)
			s.rec.Record(ev)
		}
		if e.Stall != nil {
			s.stall(f.Label, e.Stall)
		}
		if e.Delay > 0 && !s.delay(dir, e.Delay) && !forwarded && o.Dropped == "" {
			o.Dropped = "the session ended while fault " + f.Label + " delayed this message"
		}
		if !forwarded {
			o.Add(f.Label, e)
		} else {
			for range e.Copies {
				s.forward(dir, raw, cause)
			}
			for _, inj := range e.InjectAfter {
				s.inject(f.Label, inj, cause)
			}
		}
		if t := e.Throttle; t != nil {
			s.writers[t.Dir].setPace(t.Rate, t.For, s.pacedHold(f.Label, t.Dir))
		}
		for _, inj := range e.Inject {
			s.inject(f.Label, inj, cause)
		}
		if e.CloseServerInput {
			// The frames queued toward the server go before the EOF: the
			// pump flushes before its next read (and before faults after
			// forwarding, in their direction), and an eof fired before a
			// frame, or by one going to the client, lost them although
			// they were recorded as forwarded.
			s.flush(wire.ToServer)
			if s.writers[wire.ToServer].closeRecorded(func() {
				s.recordPipe(wire.PipeServerInput, "early EOF from fault "+f.Label, true)
			}) {
				s.shutdown("fault " + f.Label + " closed the server's stdin")
			}
		}
		if e.HalfClose != 0 {
			s.halfClose(f.Label, e.HalfClose)
		}
		s.applyProcess(f.Label, e)
	}
	return o
}

// delay holds the pump of dir for d, after letting what it already wrote
// reach the peer. It reports false when the session ended first.
func (s *session) delay(dir wire.Direction, d time.Duration) bool {
	s.flush(dir)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// pacedHold records each long paced write of a throttle as a window during
// which the pump writing in dir reads nothing: the judge must not count the
// peer's answers read late meanwhile as slow, as with a stall.
func (s *session) pacedHold(label string, dir wire.Direction) func(int, time.Duration) {
	if s.rec == nil {
		return nil
	}
	return func(size int, d time.Duration) {
		s.rec.Record(wire.Event{Type: wire.EventFault, Fault: label, Action: "throttle", Dir: dir.String(),
			UntilUS: s.rec.Now() + d.Microseconds(), Detail: fmt.Sprintf("pace a frame of %d bytes over %s", size, d.Round(time.Millisecond))})
	}
}

func (s *session) stall(label string, st *faults.Stall) {
	s.gates[st.Dir].set(st.For)
	if !st.ShrinkPipe {
		return
	}
	src, ok := s.source(st.Dir).(*os.File)
	detail := "this end is not an OS pipe"
	if ok {
		if size, err := shrinkPipe(src); err != nil {
			detail = err.Error()
		} else {
			detail = fmt.Sprintf("pipe shrunk to %d bytes", size)
		}
	}
	if s.rec != nil {
		s.rec.Record(wire.Event{Type: wire.EventFault, Fault: label, Action: "stall", Pipe: sourcePipe(st.Dir), Detail: detail})
	}
}

func (s *session) inject(label string, inj faults.Injection, cause int64) {
	if inj.Gap > 0 {
		t := time.NewTimer(inj.Gap)
		select {
		case <-t.C:
		case <-s.done:
			t.Stop()
			return
		}
	}
	m := wire.Classify(inj.Raw)
	if m.Kind == wire.Request && strings.HasPrefix(m.ID, wire.InjectIDPrefix) {
		// Before the write: the answer can come back before it returns.
		s.injectedBy.Store(m.ID, label)
		s.injectedAny.Store(true)
	}
	w := s.writers[inj.Dir]
	lost, err := w.put(inj.Raw, 0)
	if err == nil {
		lost, err = w.flush()
	}
	if err != nil {
		s.writeFailed(inj.Dir, lost, err)
		return
	}
	s.recordMessage(wire.EventInjected, inj.Dir, &m, label, cause)
}

func (s *session) halfClose(label string, dir wire.Direction) {
	if s.halfClosed[dir].Swap(true) {
		return
	}
	c := closerOf(s.source(dir))
	if c == nil {
		if s.rec != nil {
			s.rec.Record(wire.Event{Type: wire.EventError, Fault: label, Pipe: sourcePipe(dir), Detail: "cannot half-close: this end cannot be closed"})
		}
		return
	}
	// Recorded first: the read that the close ends records its own EOF.
	s.recordPipe(sourcePipe(dir), "half-closed by fault "+label, true)
	_ = c()
}

func (s *session) source(dir wire.Direction) io.Reader {
	if dir == wire.ToServer {
		return s.clientIn
	}
	return s.proc.Stdout
}

// sourcePipe names the pipe frames travelling in dir are read from.
func sourcePipe(dir wire.Direction) string {
	if dir == wire.ToServer {
		return wire.PipeClientInput
	}
	return wire.PipeServerOutput
}

// sinkPipe names the pipe frames travelling in dir are written to.
func sinkPipe(dir wire.Direction) string {
	if dir == wire.ToServer {
		return wire.PipeServerInput
	}
	return wire.PipeClientOutput
}

func sender(dir wire.Direction) string {
	if dir == wire.ToServer {
		return "client"
	}
	return "server"
}

// probe writes a liveness probe toward dir's receiver.
func (s *session) probe(dir wire.Direction, why string) {
	pr := wire.NewProbe(s.probes.Add(1), wire.Era(s.era.Load()))
	w := s.writers[dir]
	lost, err := w.put(pr.Raw, 0)
	if err == nil {
		lost, err = w.flush()
	}
	if err != nil {
		s.writeFailed(dir, lost, err)
		why += "; not delivered: " + err.Error()
	}
	e := wire.Event{Type: wire.EventProbe, Dir: dir.String(), ID: pr.ID, Method: pr.Method, Detail: why}
	e.SetRaw(pr.Raw)
	s.record(e)
}
