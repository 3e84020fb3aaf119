package chaos

import (
	"bufio"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

var errPipeClosed = errors.New("pipe closed")

// endWriter is the writing side toward one peer. Frames are queued and
// flushed when the pump that feeds it is about to block on a read, so a
// burst costs one write system call while a lone frame goes out at once.
// Writes of whole frames are serialized, so an injected frame never lands
// inside a relayed one. Closing does not take the lock: it must be able to
// interrupt a write that a peer which stopped reading has blocked.
//
// The queue is buf's bytes, then run's. run is frames the pump relays as
// they lie in its read buffer (see putFrame): the frames of one read, side
// by side, go out in one write straight from there, never copied.
type endWriter struct {
	mu      sync.Mutex
	w       io.Writer // what buf writes to
	buf     *bufio.Writer
	run     []byte  // borrowed from the pump's read buffer; after buf
	pending []int64 // transcript seqs of the frames in buf and run
	closer  func() error
	closed  atomic.Bool
	// done ends the pauses of paced and fragmented writes (the session's
	// done channel); nil pauses for the full time.
	done <-chan struct{}
	// pace is the throttle in force, if any (see setPace).
	pace atomic.Pointer[pacing]
}

func newEndWriter(w io.Writer, closer func() error) *endWriter {
	return &endWriter{w: w, buf: bufio.NewWriterSize(w, writeBuffer), closer: closer}
}

// writeBuffer bounds what a flush can carry; frames larger than it are
// written straight through.
const writeBuffer = 64 << 10

// put queues a copy of a frame. When the write fails, lost lists the frames
// that never reached the peer (this one included).
func (e *endWriter) put(b []byte, seq int64) (lost []int64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.putLocked(b, seq, 1)
}

// putFrame queues a frame without copying it: b must stay unchanged until
// the next flush, as the frames of the pump's read buffer do (the pump
// flushes before it reads again). A frame that follows the one before it
// in that buffer joins it in one write.
func (e *endWriter) putFrame(b []byte, seq int64) (lost []int64, err error) {
	return e.putFrames(b, seq, 1)
}

// putFrames is putFrame for n frames recorded together, whose received
// events are seq, seq+2...: the frames of one read of a session whose
// frames nobody reads.
func (e *endWriter) putFrames(b []byte, seq int64, n int) (lost []int64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed.Load() {
		return framesOf(nil, seq, n), errPipeClosed
	}
	switch {
	case len(b) == 0 || e.pace.Load() != nil && e.pacing() != nil:
		// A throttle paces every frame from the moment it is set, the
		// next frame of a run too.
		return e.putLocked(b, seq, n)
	case len(e.run) > 0 && follows(e.run, b):
		e.run = e.run[:len(e.run)+len(b)]
	case len(e.run) > 0:
		return e.putLocked(b, seq, n)
	default:
		e.run = b
	}
	e.pending = framesOf(e.pending, seq, n)
	return nil, nil
}

// framesOf appends the seqs of n frames recorded together from seq; a
// frame not recorded has seq 0.
func framesOf(seqs []int64, seq int64, n int) []int64 {
	if seq == 0 {
		return append(seqs, 0)
	}
	for i := range n {
		seqs = append(seqs, seq+2*int64(i))
	}
	return seqs
}

// follows reports whether b starts where run ends, in the same array.
func follows(run, b []byte) bool {
	n := len(run)
	return len(b) > 0 && cap(run)-n >= len(b) && &run[:n+1][n] == &b[0]
}

// spill moves the borrowed run into buf, so that what is queued next goes
// after it, whatever writes it. e.mu is held.
func (e *endWriter) spill() error {
	if len(e.run) == 0 {
		return nil
	}
	run := e.run
	e.run = nil
	_, err := e.buf.Write(run)
	return err
}

func (e *endWriter) putLocked(b []byte, seq int64, n int) (lost []int64, err error) {
	if e.closed.Load() {
		return framesOf(nil, seq, n), errPipeClosed
	}
	e.pending = framesOf(e.pending, seq, n)
	if err := e.spill(); err != nil {
		return e.fail(err)
	}
	if p := e.pacing(); p != nil {
		if err := e.writePaced(b, p); err != nil {
			return e.fail(err)
		}
		e.pending = e.pending[:0]
		return nil, nil
	}
	if _, err := e.buf.Write(b); err != nil {
		return e.fail(err)
	}
	return nil, nil
}

// flush writes out the queued frames.
func (e *endWriter) flush() (lost []int64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.buf.Buffered() == 0 && len(e.run) == 0 {
		e.pending = e.pending[:0]
		return nil, nil
	}
	if e.closed.Load() {
		return e.fail(errPipeClosed)
	}
	if err := e.buf.Flush(); err != nil {
		return e.fail(err)
	}
	if len(e.run) > 0 {
		// Straight from the pump's buffer, as bufio writes a long frame.
		_, err := e.w.Write(e.run)
		e.run = nil
		if err != nil {
			return e.fail(err)
		}
	}
	e.pending = e.pending[:0]
	return nil, nil
}

func (e *endWriter) fail(err error) ([]int64, error) {
	e.closed.Store(true)
	lost := append([]int64(nil), e.pending...)
	e.pending = e.pending[:0]
	e.run = nil
	e.buf.Reset(io.Discard)
	return lost, err
}

// close reports whether this call closed the pipe.
func (e *endWriter) close() bool { return e.closeRecorded(nil) }

// closeRecorded is close with record run after the pipe is ours to close
// and before it closes: the peer may act on the EOF at once (exit, end its
// output), and the record must show the close before what it caused.
func (e *endWriter) closeRecorded(record func()) bool {
	if e.closed.Swap(true) {
		return false
	}
	if record != nil {
		record()
	}
	if e.closer != nil {
		_ = e.closer()
	}
	return true
}

// stallGate holds frames of one direction while a stall fault is in force.
type stallGate struct {
	// used says a stall or a hold was ever set, so that the relay of a
	// session without one never takes the lock or reads the clock.
	used    atomic.Bool
	mu      sync.Mutex
	until   time.Time
	forever bool
	changed chan struct{} // closed and replaced when the stall is extended
	// held counts holds that last until released (a stderr flood blocked
	// in its write), on top of the timed stall.
	held int
}

// hold stops the direction until release; holds and stalls add up.
func (g *stallGate) hold() {
	g.used.Store(true)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held++
}

// release ends one hold, waking the pump if nothing else holds it.
func (g *stallGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held--
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

func (g *stallGate) set(d time.Duration) {
	g.used.Store(true)
	g.mu.Lock()
	defer g.mu.Unlock()
	if d == 0 {
		g.forever = true
	} else if u := time.Now().Add(d); u.After(g.until) {
		g.until = u
	}
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// wait blocks while the gate is stalled. It returns false when the session
// ended first: a frame held by a stall that never lifted is never delivered.
func (g *stallGate) wait(done <-chan struct{}) bool {
	for {
		g.mu.Lock()
		forever, left := g.forever || g.held > 0, time.Until(g.until)
		if !forever && left <= 0 {
			g.mu.Unlock()
			return true
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		changed := g.changed
		g.mu.Unlock()
		var timer *time.Timer
		var timeout <-chan time.Time
		if !forever {
			timer = time.NewTimer(left)
			timeout = timer.C
		}
		select {
		case <-done:
			return false
		case <-changed:
		case <-timeout:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// stalled reports whether the gate holds frames now, without blocking.
func (g *stallGate) stalled() bool {
	if !g.used.Load() {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.forever || g.held > 0 || time.Now().Before(g.until)
}
