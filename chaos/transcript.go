package chaos

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/sse"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Recorder receives the transcript's events in order. Record assigns Seq and T
// and returns the Seq.
type Recorder interface {
	Record(e wire.Event) int64
	// Now is the T that Record would stamp on an event now, so that events
	// can name other moments on the same clock (a stall's end).
	Now() int64
}

// clock stamps events with microseconds since the session started, read from
// the monotonic clock so that wall-clock jumps cannot reorder them.
type clock struct{ start time.Time }

func (c clock) now() int64 { return time.Since(c.start).Microseconds() }

// JSONLRecorder streams events to a writer, one JSON object a line, and the
// frames relayed untouched as they came after the line that stands for
// their events (transcript format 3, RecordForwarded), so that memory does
// not grow with the length of a session.
type JSONLRecorder struct {
	mu    sync.Mutex
	clock clock
	seq   int64
	last  int64  // the T of the latest event
	line  []byte // the head of the line being written; reused
	buf   []byte // lines not yet written
	spare []byte // a buffer written out, for the next buf
	// OnEvent, if set before the session starts, sees every event once it
	// is stamped, in order: wrap --report feeds the streaming judge with it.
	OnEvent func(wire.Event)
	// eventsStopped, set by StopEvents, keeps OnEvent from hearing more.
	eventsStopped bool
	// kick, while FlushEvery runs, hears of the first event written into
	// an empty buffer.
	kick chan struct{}

	// wmu gives writes to w their turn. It is taken while mu is held, so
	// that buffers reach w in the order they were filled, and mu is let go
	// before the write itself: the two directions of a session go on
	// recording while a full buffer goes to disk, where they used to wait
	// for the write system call under mu.
	wmu sync.Mutex
	w   io.Writer
	err error // the first write error; under wmu
}

// flushSize is how much the recorder buffers before it writes.
const flushSize = 256 << 10

// NewJSONLRecorder writes to w; call Flush when the session ends.
func NewJSONLRecorder(w io.Writer) *JSONLRecorder {
	return &JSONLRecorder{w: w, buf: make([]byte, 0, flushSize), clock: clock{time.Now()}}
}

// Record implements Recorder. A write error is kept and reported by Flush; the
// session goes on, since the peers must not suffer for a full disk.
//
// The event's body, all but its seq and time, is encoded before the lock is
// taken, so that the two directions of a session encode their frames at
// the same time and only take turns to stamp and queue them.
func (r *JSONLRecorder) Record(e wire.Event) int64 {
	buf := bodies.Get().(*[]byte)
	// The body goes after room for the longest head, which is filled in
	// under the lock, so that the line is one piece.
	line := e.AppendBody(append((*buf)[:0], headRoom[:]...))
	now := r.clock.now()
	r.mu.Lock()
	r.seq++
	// Read before the lock, the clock may be behind the event before.
	r.last = max(r.last, now)
	e.Seq, e.T = r.seq, r.last
	if r.OnEvent != nil && !r.eventsStopped {
		r.OnEvent(e)
	}
	r.stampUnlock(buf, line, e.Seq, e.T)
	return e.Seq
}

// StopEvents keeps OnEvent from seeing any event recorded from now on; the
// events still go to the writer. A session's end does not wait for a
// client's input that cannot be closed under its reader (a terminal, an
// io.Reader handed to Start), and what that reader records late must not
// reach a judge whose verdict is being read.
func (r *JSONLRecorder) StopEvents() {
	r.mu.Lock()
	r.eventsStopped = true
	r.mu.Unlock()
}

// pairRecorder is a Recorder that can record frames' received events and
// their forwarded events back to back: the relay's commonest pair, taken as
// one turn at the lock for all the frames of one read.
type pairRecorder interface {
	// RecordForwarded records the n frames in frames (whole lines, but for
	// the unterminated end of a stream), travelling in dir, each as
	// received at at (on the clock of Now, or later if an event recorded
	// since was) and then as forwarded at the same time, and returns the
	// first received event's Seq; the others follow two apart. Nothing
	// need read what the frames are.
	RecordForwarded(dir wire.Direction, frames []byte, n int, at int64) int64
}

// RecordForwarded implements pairRecorder. It writes the frames as they
// came, after a line that says how long they are and stands for all their
// events (transcript format 3, wire.AppendRelayedHead): they are neither
// classified nor escaped, only copied, unless OnEvent needs their events.
func (r *JSONLRecorder) RecordForwarded(dir wire.Direction, frames []byte, n int, at int64) int64 {
	var events []wire.Event
	if r.OnEvent != nil {
		// Built before the lock, as Record's callers build theirs.
		events = receivedEvents(dir, frames)
	}
	r.mu.Lock()
	seq, t := r.stampPairsLocked(events, n, at)
	r.line = wire.AppendRelayedHead(r.line[:0], seq, t, dir, len(frames), n)
	r.appendFramesUnlock(frames)
	return seq
}

// stampPairsLocked takes the seqs of n received events read at at (or
// later, if an event recorded since was), each followed by its forwarded
// event, and returns the first and their time. It hands OnEvent events,
// the received ones (built when it is set), stamped, each with its
// forwarded event. r.mu is held.
func (r *JSONLRecorder) stampPairsLocked(events []wire.Event, n int, at int64) (seq, t int64) {
	seq = r.seq + 1
	r.seq += 2 * int64(n)
	r.last = max(r.last, at)
	t = r.last
	if r.eventsStopped {
		events = nil
	}
	for i, e := range events {
		e.Seq, e.T = seq+2*int64(i), t
		r.OnEvent(e)
		r.OnEvent(wire.ForwardedPair(e))
	}
	return seq, t
}

// appendFramesUnlock queues r.line and the frames that follow it, and lets
// go of r.mu, writing out the buffer when it is full. r.mu is held.
func (r *JSONLRecorder) appendFramesUnlock(frames []byte) {
	if r.kick != nil && len(r.buf) == 0 {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	if len(frames) >= flushSize || len(r.buf)+len(r.line)+len(frames) > flushSize {
		// Out with what came before, the line, and frames too long to
		// copy from where they lie.
		full := append(r.take(), r.line...)
		if len(frames) < flushSize {
			full, frames = append(full, frames...), nil
		}
		r.writeUnlock(full, frames)
		return
	}
	r.buf = append(r.buf, r.line...)
	r.buf = append(r.buf, frames...)
	r.mu.Unlock()
}

// RecordRelayedEvent records the message of one SSE event that the HTTP
// proxy relayed untouched, in exchange, with the event's id, received at
// at (or later, if an event recorded since was) and forwarded at once: the
// message's bytes as they came, after a line that stands for both events
// (wire.AppendRelayedEventHead), neither classified nor escaped, unless
// OnEvent needs the events. It returns the received event's Seq. The
// message must be non-empty, hold no newline, and eventID be at most
// wire.MaxRelayedEventID long; the proxy records any other the long way.
func (r *JSONLRecorder) RecordRelayedEvent(dir wire.Direction, exchange int64, eventID string, message []byte, at int64) int64 {
	var events []wire.Event
	if r.OnEvent != nil {
		events = []wire.Event{relayedEvent(dir, exchange, eventID, message)}
	}
	r.mu.Lock()
	seq, t := r.stampPairsLocked(events, 1, at)
	r.line = wire.AppendRelayedEventHead(r.line[:0], seq, t, dir, exchange, eventID, len(message))
	r.appendFramesUnlock(message)
	return seq
}

// RecordRelayedEvents records a run of n SSE events (sse.PeekRun) that the
// HTTP proxy read together in exchange and relayed untouched, received at
// at (or later, if an event recorded since was) and forwarded at once:
// the run's bytes as the server sent them, after a line that stands for
// the received and forwarded events of their messages
// (wire.AppendRelayedEventsHead), neither framed nor classified here
// unless OnEvent needs the events. It returns the first received event's
// Seq; the others follow two apart.
func (r *JSONLRecorder) RecordRelayedEvents(dir wire.Direction, exchange int64, run []byte, n int, at int64) int64 {
	var events []wire.Event
	if r.OnEvent != nil {
		events = relayedEvents(dir, exchange, run)
	}
	r.mu.Lock()
	seq, t := r.stampPairsLocked(events, n, at)
	r.line = wire.AppendRelayedEventsHead(r.line[:0], seq, t, dir, exchange, len(run), n)
	r.appendFramesUnlock(run)
	return seq
}

// relayedEvents are the received events of the messages of a run of SSE
// events, as the transcript reader makes them.
func relayedEvents(dir wire.Direction, exchange int64, run []byte) []wire.Event {
	var events []wire.Event
	// The run came from sse.PeekRun: it splits.
	_, _ = sse.SplitRun(run, func(id, data []byte) error {
		events = append(events, relayedEvent(dir, exchange, string(id), data))
		return nil
	})
	return events
}

// relayedEvent is the received event of an SSE event's message that the
// HTTP proxy relayed untouched, as the transcript reader makes it.
func relayedEvent(dir wire.Direction, exchange int64, eventID string, message []byte) wire.Event {
	m := wire.Classify(message)
	e := wire.Event{Type: wire.EventReceived, Exchange: exchange, EventID: eventID}
	e.SetMessage(dir, &m)
	return e
}

// receivedEvents are the received events of the frames in frames, cut
// after each newline and classified, each with a copy of its bytes.
func receivedEvents(dir wire.Direction, frames []byte) []wire.Event {
	var events []wire.Event
	for len(frames) > 0 {
		end := bytes.IndexByte(frames, '\n') + 1
		if end == 0 {
			end = len(frames)
		}
		m := wire.Classify(frames[:end:end])
		e := wire.Event{Type: wire.EventReceived}
		e.SetMessage(dir, &m)
		events = append(events, e)
		frames = frames[end:]
	}
	return events
}

// stampUnlock fills in the head of line's first event (seq and t) in the
// room left for it, queues line, lets go of r.mu, and gives line's buffer
// (buf, which line grew from) back to the pool. r.mu is held.
func (r *JSONLRecorder) stampUnlock(buf *[]byte, line []byte, seq, t int64) {
	r.line = wire.AppendHead(r.line[:0], seq, t)
	start := len(headRoom) - len(r.line)
	copy(line[start:], r.line)
	if r.kick != nil && len(r.buf) == 0 {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	r.queueUnlock(line[start:])
	if *buf = line; cap(line) <= maxPooledBody {
		bodies.Put(buf)
	}
}

// queueUnlock queues lines for writing and lets go of r.mu, writing out
// the buffer when it is full.
func (r *JSONLRecorder) queueUnlock(lines []byte) {
	switch {
	case len(lines) >= flushSize:
		// A long frame is written from where it was encoded rather
		// than copied into buf.
		r.writeUnlock(r.take(), lines)
	case len(r.buf)+len(lines) > flushSize:
		full := r.take()
		r.buf = append(r.buf, lines...)
		r.writeUnlock(full, nil)
	default:
		r.buf = append(r.buf, lines...)
		r.mu.Unlock()
	}
}

// take returns the lines buffered and starts a new buffer. r.mu is held.
func (r *JSONLRecorder) take() []byte {
	full := r.buf
	r.buf, r.spare = r.spare, nil
	if r.buf == nil {
		r.buf = make([]byte, 0, flushSize)
	}
	return full
}

// writeUnlock writes full, then more, to w, and keeps full for reuse. It is
// called with r.mu held and lets go of it once its turn to write is taken.
func (r *JSONLRecorder) writeUnlock(full, more []byte) {
	r.wmu.Lock()
	r.mu.Unlock()
	for _, b := range [2][]byte{full, more} {
		if len(b) == 0 {
			continue
		}
		if _, err := r.w.Write(b); err != nil && r.err == nil {
			r.err = fmt.Errorf("writing transcript: %w", err)
		}
	}
	r.wmu.Unlock()
	if cap(full) > 2*flushSize {
		return // grown by one long line: not kept
	}
	r.mu.Lock()
	if r.spare == nil {
		r.spare = full[:0]
	}
	r.mu.Unlock()
}

// headRoom is the room left before an event's body for its head: two
// int64s of up to 20 characters each and the member names around them.
var headRoom [len(`{"seq":,"t_us":`) + 2*20]byte

// bodies holds the buffers events are encoded into before a recorder's lock.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody is the largest body buffer kept for reuse: one 64 MiB line
// must not stay in memory for the rest of the session.
const maxPooledBody = 1 << 20

// Now implements Recorder.
func (r *JSONLRecorder) Now() int64 { return r.clock.now() }

// FlushEvery flushes every event within d of its recording, until stop is
// called, so that a wrap process killed with SIGKILL (some clients kill
// their server that way, often within milliseconds of their last call)
// still leaves all but the last moment of its record. It writes at most once
// every d, however busy the session: the first event into an empty buffer
// starts the wait, and the flush takes whatever came meanwhile.
func (r *JSONLRecorder) FlushEvery(d time.Duration) (stop func()) {
	kick := make(chan struct{}, 1)
	r.mu.Lock()
	r.kick = kick
	if len(r.buf) > 0 {
		kick <- struct{}{}
	}
	r.mu.Unlock()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTimer(d)
		t.Stop()
		for {
			select {
			case <-kick:
				t.Reset(d)
				select {
				case <-t.C:
					_ = r.Flush()
				case <-done:
					return
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		r.mu.Lock()
		r.kick = nil
		r.mu.Unlock()
	}
}

// idleFlusher is a recorder that writes out what it holds when the relay is
// about to wait for a peer.
type idleFlusher interface{ flushIdle() }

// flushIdle writes out buffered events while FlushEvery runs: the relay calls
// it when a pump is about to wait on a read, the moment a whole exchange has
// been recorded, so a SIGKILL a few milliseconds later loses nothing.
func (r *JSONLRecorder) flushIdle() {
	r.mu.Lock()
	if r.kick == nil || len(r.buf) == 0 {
		r.mu.Unlock()
		return
	}
	r.writeUnlock(r.take(), nil)
}

// Flush writes out buffered events and returns the first error seen.
func (r *JSONLRecorder) Flush() error {
	r.mu.Lock()
	r.writeUnlock(r.take(), nil)
	r.wmu.Lock()
	defer r.wmu.Unlock()
	return r.err
}

// MemoryRecorder keeps events in memory; tests and short runs use it.
type MemoryRecorder struct {
	mu     sync.Mutex
	clock  clock
	events []wire.Event
}

func NewMemoryRecorder() *MemoryRecorder { return &MemoryRecorder{clock: clock{time.Now()}} }

func (r *MemoryRecorder) Record(e wire.Event) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Seq, e.T = int64(len(r.events)+1), r.clock.now()
	r.events = append(r.events, e)
	return e.Seq
}

// RecordForwarded records as JSONLRecorder does, so that tests see the
// relay's paired path.
func (r *MemoryRecorder) RecordForwarded(dir wire.Direction, frames []byte, n int, at int64) int64 {
	return r.appendPairs(receivedEvents(dir, frames), at)
}

// appendPairs appends the received events of frames read at at (or later,
// if an event recorded since was), each followed by its forwarded event,
// and returns the first one's Seq.
func (r *MemoryRecorder) appendPairs(events []wire.Event, at int64) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k := len(r.events); k > 0 {
		at = max(at, r.events[k-1].T)
	}
	first := int64(len(r.events) + 1)
	for _, e := range events {
		e.Seq, e.T = int64(len(r.events)+1), at
		r.events = append(r.events, e, wire.ForwardedPair(e))
	}
	return first
}

// RecordRelayedEvent records as JSONLRecorder does, so that tests see the
// HTTP proxy's paired path.
func (r *MemoryRecorder) RecordRelayedEvent(dir wire.Direction, exchange int64, eventID string, message []byte, at int64) int64 {
	return r.appendPairs([]wire.Event{relayedEvent(dir, exchange, eventID, message)}, at)
}

// RecordRelayedEvents records as JSONLRecorder does, so that tests see
// the HTTP proxy's runs.
func (r *MemoryRecorder) RecordRelayedEvents(dir wire.Direction, exchange int64, run []byte, n int, at int64) int64 {
	return r.appendPairs(relayedEvents(dir, exchange, run), at)
}

// Now implements Recorder.
func (r *MemoryRecorder) Now() int64 { return r.clock.now() }

// Events returns a copy of the events so far.
func (r *MemoryRecorder) Events() []wire.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wire.Event(nil), r.events...)
}
