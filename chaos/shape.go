package chaos

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// This file carries out the message-shaping effects: holding messages back
// to reorder them (reorder), writing a frame in pieces (fragment) and pacing
// a direction to a byte rate (throttle).

// holdGroup is what one reorder firing holds back: the triggering message,
// and for UntilAnswer the later progress notifications of its token.
type holdGroup struct {
	label string
	dir   wire.Direction
	hold  faults.Hold
	held  []heldFrame
	timer *time.Timer
}

type heldFrame struct {
	raw    []byte // a copy: the frame reader reuses its buffer
	seq    int64
	copies int
}

// holds are the held groups of a session. Once closed (the session is
// ending) nothing more is held: what would be is forwarded at once.
type holds struct {
	mu     sync.Mutex
	groups []*holdGroup
	closed bool
	// ever is set with the first group, so that a session whose faults
	// never hold a frame does not take mu for every frame it relays.
	ever atomic.Bool
	// expiring counts timer releases under way, which the session waits
	// for so that none outlives it.
	expiring sync.WaitGroup
}

// hold keeps the frame seq back until h says. It reports false when the
// session is ending and the frame must be forwarded now instead.
func (s *session) hold(label string, h *faults.Hold, dir wire.Direction, raw []byte, seq int64, copies int) bool {
	s.holds.mu.Lock()
	defer s.holds.mu.Unlock()
	if s.holds.closed {
		return false
	}
	g := &holdGroup{label: label, dir: dir, hold: *h, held: []heldFrame{{raw: append([]byte(nil), raw...), seq: seq, copies: copies}}}
	g.timer = time.AfterFunc(h.Max, func() { s.expire(g) })
	s.holds.groups = append(s.holds.groups, g)
	s.holds.ever.Store(true)
	return true
}

// holdWith holds m with a group that waits for the answer to the request its
// progress token belongs to, so that all of a request's progress arrives
// after its answer. It reports whether m was held.
func (s *session) holdWith(dir wire.Direction, m *wire.Message, seq int64) bool {
	if m.Kind != wire.Notification || m.Method != "notifications/progress" || m.ProgressToken == "" {
		return false
	}
	s.holds.mu.Lock()
	defer s.holds.mu.Unlock()
	for _, g := range s.holds.groups {
		if g.dir == dir && g.hold.Until == faults.UntilAnswer && g.hold.Token == m.ProgressToken {
			g.held = append(g.held, heldFrame{raw: append([]byte(nil), m.Raw...), seq: seq})
			s.recordHold(g, seq, fmt.Sprintf("hold this progress for token %s too, with the frame of seq %d", m.ProgressToken, g.held[0].seq))
			return true
		}
	}
	return false
}

// releaseAfter releases, right after m (of seq) has been forwarded in dir,
// the groups that waited for it: those waiting for the next message that
// way, and those waiting for the answer m is.
func (s *session) releaseAfter(dir wire.Direction, m *wire.Message, seq int64) {
	if !s.holds.ever.Load() {
		// Only the pump of dir holds frames travelling in dir, and
		// this is that pump: none can be held that it did not see.
		return
	}
	s.holds.mu.Lock()
	var due []*holdGroup
	keep := s.holds.groups[:0]
	for _, g := range s.holds.groups {
		if g.dir == dir && (g.hold.Until == faults.UntilNext || (m.IsAnswer() && g.hold.AnswerID == m.ID)) {
			g.timer.Stop()
			due = append(due, g)
			continue
		}
		keep = append(keep, g)
	}
	clear(s.holds.groups[len(keep):])
	s.holds.groups = keep
	s.holds.mu.Unlock()
	for _, g := range due {
		s.release(g, fmt.Sprintf("after the frame of seq %d", seq))
	}
}

// expire releases g when its longest hold has passed. It runs on the timer's
// goroutine, so it never writes in the middle of an over-long line being
// relayed in pieces: then it tries again shortly.
func (s *session) expire(g *holdGroup) {
	s.holds.mu.Lock()
	i := -1
	for j, x := range s.holds.groups {
		if x == g {
			i = j
		}
	}
	if s.holds.closed || i < 0 {
		s.holds.mu.Unlock()
		return
	}
	if s.midLine[g.dir].Load() {
		g.timer.Reset(10 * time.Millisecond)
		s.holds.mu.Unlock()
		return
	}
	s.holds.groups = append(s.holds.groups[:i], s.holds.groups[i+1:]...)
	s.holds.expiring.Add(1)
	s.holds.mu.Unlock()
	defer s.holds.expiring.Done()
	s.release(g, fmt.Sprintf("after %s, the longest hold (max=)", g.hold.Max))
	s.flush(g.dir)
}

// releaseHeld releases the frames held in dir when nothing more can come
// that way, so nothing they wait for will: they go out while their pipe is
// still open.
func (s *session) releaseHeld(dir wire.Direction, when string) {
	s.holds.mu.Lock()
	var due []*holdGroup
	keep := s.holds.groups[:0]
	for _, g := range s.holds.groups {
		if g.dir == dir {
			g.timer.Stop()
			due = append(due, g)
			continue
		}
		keep = append(keep, g)
	}
	clear(s.holds.groups[len(keep):])
	s.holds.groups = keep
	s.holds.mu.Unlock()
	for _, g := range due {
		s.release(g, when)
	}
	if len(due) > 0 {
		s.flush(dir)
	}
}

// releaseAllHeld ends holding when the session ends: every held frame is
// written if its pipe is still open, else recorded as dropped with why.
func (s *session) releaseAllHeld() {
	s.holds.mu.Lock()
	s.holds.closed = true
	groups := s.holds.groups
	s.holds.groups = nil
	for _, g := range groups {
		g.timer.Stop()
	}
	s.holds.mu.Unlock()
	s.holds.expiring.Wait()
	for _, g := range groups {
		s.release(g, "as the session ends")
		s.flush(g.dir)
	}
}

func (s *session) release(g *holdGroup, when string) {
	for _, f := range g.held {
		s.recordHold(g, f.seq, "release the held frame "+when)
		s.forward(g.dir, f.raw, f.seq)
		for range f.copies {
			s.forward(g.dir, f.raw, f.seq)
		}
	}
}

func (s *session) recordHold(g *holdGroup, seq int64, detail string) {
	if s.rec != nil {
		s.rec.Record(wire.Event{Type: wire.EventFault, Fault: g.label, Action: "reorder", Dir: g.dir.String(), Of: seq, Detail: detail})
	}
}

// forwardPieces writes a received frame in the pieces f cuts it into, f.Gap
// apart; like forward it waits out a stall first.
func (s *session) forwardPieces(dir wire.Direction, raw []byte, seq int64, f *faults.Fragment) {
	if s.gates[dir].stalled() {
		s.flush(dir)
		if !s.gates[dir].wait(s.done) {
			s.recordRef(wire.EventDropped, dir, seq, "the session ended while this direction was stalled")
			return
		}
	}
	var pieces [][]byte
	start := 0
	for _, c := range f.Cuts {
		if c <= start || c >= len(raw) {
			continue // cuts that do not fit this frame are a fault bug; never split wrongly
		}
		pieces = append(pieces, raw[start:c])
		start = c
	}
	pieces = append(pieces, raw[start:])
	if lost, err := s.writers[dir].putPieces(pieces, f.Gap, seq); err != nil {
		s.writeFailed(dir, lost, err)
		return
	}
	s.recordRef(wire.EventForwarded, dir, seq, "")
}

// pacing is a throttle in force on a writer.
type pacing struct {
	rate  int64     // bytes per second
	until time.Time // zero: the rest of the session
	// held is told, before a frame is paced, how long that will take
	// when it is long enough to matter (minHeld): meanwhile the pump
	// behind the writer reads nothing.
	held func(size int, d time.Duration)
}

// minHeld is the shortest paced write worth recording: below it, the pump's
// absence is lost in the judge's deadlines.
const minHeld = 20 * time.Millisecond

// setPace paces every frame written from now on to rate bytes per second,
// for d (0 is for ever); held, when not nil, hears of every long paced write.
func (e *endWriter) setPace(rate int64, d time.Duration, held func(size int, d time.Duration)) {
	p := &pacing{rate: rate, held: held}
	if d > 0 {
		p.until = time.Now().Add(d)
	}
	e.pace.Store(p)
}

// pacing returns the throttle in force, nil when none is.
func (e *endWriter) pacing() *pacing {
	p := e.pace.Load()
	if p == nil || (!p.until.IsZero() && time.Now().After(p.until)) {
		return nil
	}
	return p
}

// pause waits d unless the session has ended; once it has, writes go out at
// once, so that nothing waits on a session that is over.
func (e *endWriter) pause(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.done:
	}
}

// writePaced writes b through in chunks paced to p. The lock is held, so no
// other frame can land between the chunks.
func (e *endWriter) writePaced(b []byte, p *pacing) error {
	if err := e.buf.Flush(); err != nil {
		return err
	}
	if d := time.Duration(int64(len(b)) * int64(time.Second) / p.rate); p.held != nil && d >= minHeld {
		p.held(len(b), d)
	}
	chunk := int(min(max(p.rate/50, 1), writeBuffer)) // about 50 writes a second
	start := time.Now()
	written := int64(0)
	for len(b) > 0 {
		n := min(chunk, len(b))
		if _, err := e.buf.Write(b[:n]); err != nil {
			return err
		}
		if err := e.buf.Flush(); err != nil {
			return err
		}
		b = b[n:]
		written += int64(n)
		// Sleep until the rate allows what was written, measured from the
		// start so that the sleeps' overshoot does not add up.
		due := start.Add(time.Duration(written * int64(time.Second) / p.rate))
		e.pause(time.Until(due))
	}
	return nil
}

// putPieces writes one frame as separate writes, gap apart, each flushed to
// the peer. The lock is held throughout, so no other frame lands between the
// pieces; a throttle in force paces each piece as well.
func (e *endWriter) putPieces(pieces [][]byte, gap time.Duration, seq int64) (lost []int64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed.Load() {
		return []int64{seq}, errPipeClosed
	}
	e.pending = append(e.pending, seq)
	if err := e.spill(); err != nil {
		return e.fail(err)
	}
	p := e.pacing()
	for i, piece := range pieces {
		if i > 0 {
			e.pause(gap)
		}
		if p != nil {
			err = e.writePaced(piece, p)
		} else if _, err = e.buf.Write(piece); err == nil {
			err = e.buf.Flush()
		}
		if err != nil {
			return e.fail(err)
		}
	}
	e.pending = e.pending[:0]
	return nil, nil
}

// holding reports whether any frames are held back, which a frame relayed
// next may join or release.
func (s *session) holding() bool {
	if !s.holds.ever.Load() {
		return false
	}
	s.holds.mu.Lock()
	defer s.holds.mu.Unlock()
	return len(s.holds.groups) > 0
}
