package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unsafe"
)

// Event is one server-sent event as it travelled: its bytes, blank line
// included, so that an event no fault touches is written on unchanged.
type Event struct {
	Raw  []byte
	ID   string
	Name string // the event: field; "" is the default "message"
	Data []byte // the data: lines joined by "\n"
	// HasData says a data: field was present (a priming event has none).
	HasData bool
	// Retry is the reconnection delay a retry: field set, or 0.
	Retry time.Duration
}

// IsMessage says the event carries a JSON-RPC message: a data event of
// the default type or "message". The legacy transport's "endpoint" event
// carries a URL, and the priming event a 2025-11-25 server sends so that
// the client has an id to resume from has empty data: neither is one.
func (e *Event) IsMessage() bool {
	return len(bytes.TrimSpace(e.Data)) > 0 && (e.Name == "" || e.Name == "message")
}

// ErrTooLong ends a stream whose event is larger than the size cap:
// holding it whole to classify would let one stream take unbounded memory.
var ErrTooLong = errors.New("event longer than the size cap")

// Reader frames a text/event-stream body into events, as the EventSource
// specification parses it: lines end in "\n", "\r\n" (a lone "\r" ends a
// line too but is rare enough to be read as part of the line), a blank
// line ends an event, ":" starts a comment.
type Reader struct {
	src io.Reader
	buf []byte
	// r and w bound the bytes read and not yet framed: buf[r:w]; start is
	// where the event being framed begins, while it lies in buf whole.
	r, w, start int
	err         error // the source's, once buf[r:w] is framed
	max         int
	// shared, beforeRead: see NewSharedReader.
	shared     bool
	beforeRead func()
	// names holds the ids and names of the events read, one after the
	// other: a string of its own for each event's id cost the relay a
	// fifth of its time on a burst of events.
	names []byte
}

// readSize is the reader's buffer: an event that fits is framed where it
// was read, and events that came in one read leave it together.
const readSize = 64 << 10

// NewReader reads events from r, none larger than max bytes. Each event
// it returns owns its bytes.
func NewReader(r io.Reader, max int) *Reader {
	return newReaderSize(r, max, readSize)
}

func newReaderSize(r io.Reader, max, size int) *Reader {
	return &Reader{src: r, buf: make([]byte, size), max: max}
}

// NewSharedReader is NewReader for a relay that passes events on as they
// came: an event's Raw and Data may be the reader's own buffer, valid
// until the reader next reads from r, which it announces by calling
// beforeRead first. That is the moment the relay must be done with the
// events it holds, and the one moment the reader may block: so what the
// relay holds is never held waiting for the server. Raw then keeps the
// buffer's capacity, so that events read together can be seen to lie
// side by side (Adjacent); nothing may append to it.
//
// Its buffer comes from a pool: call Release when the relay is done with
// it.
func NewSharedReader(r io.Reader, max int, beforeRead func()) *Reader {
	return &Reader{src: r, buf: buffers.Get().(*[readSize]byte)[:], max: max, shared: true, beforeRead: beforeRead}
}

// buffers holds the buffers of shared readers whose relays are done. The
// HTTP proxy opens a shared reader for every answer that is a stream, and
// a new 64 KiB buffer for each was three quarters of what the proxy
// allocated a request (1,000 events in one write): it cleared and
// collected more than the stream's bytes.
var buffers = sync.Pool{New: func() any { return new([readSize]byte) }}

// ErrReleased is what a reader returns once Release gave its buffer back.
var ErrReleased = errors.New("sse: the reader was released")

// Release gives a shared reader's buffer back to the pool, for another
// stream's reader. Call it once nothing the reader returned is used any
// more: another reader may then write over those bytes. The reader reads
// nothing after it (ErrReleased). Release on a reader NewReader made, or
// a second time, does nothing.
func (r *Reader) Release() {
	if !r.shared || r.buf == nil {
		return
	}
	if len(r.buf) == readSize {
		buffers.Put((*[readSize]byte)(r.buf))
	}
	r.buf, r.r, r.w, r.start, r.err = nil, 0, 0, 0, ErrReleased
}

// Adjacent says whether b begins where a ends, in one buffer: two events a
// shared reader returned one after the other, which can go on as one
// write.
func Adjacent(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && cap(a)-len(a) >= len(b) && &a[:len(a)+1][len(a)] == &b[0]
}

// str returns b as a string kept in r.names. Bytes appended there are
// never written again (a full block is left to the strings that point
// into it, and a new one started), so the strings stay as they were made.
// The blocks start small and double: most streams the proxy relays are one
// answer, whose id or the id of a run's last event is the only string, and
// a first block of 4 KiB was a sixth of what the proxy allocated a request.
func (r *Reader) str(b []byte) string {
	const firstBlock, block, longest = 64, 4 << 10, 256
	switch {
	case len(b) == 0:
		return ""
	case len(b) > longest:
		return string(b)
	case cap(r.names)-len(r.names) < len(b):
		r.names = make([]byte, 0, max(min(2*cap(r.names), block), firstBlock, len(b)))
	}
	start := len(r.names)
	r.names = append(r.names, b...)
	return unsafe.String(&r.names[start], len(b))
}

// Next returns the next complete event. At the end of the stream it
// returns what was read of an unfinished event (Raw set, possibly empty)
// with the error.
func (r *Reader) Next() (Event, error) {
	var e Event
	// The event's bytes so far are buf[start:r] until they no longer fit
	// in buf; then they are spill, a copy of their own.
	r.start = r.r
	var spill []byte
	raw := func() []byte {
		if spill != nil {
			return spill
		}
		return r.buf[r.start:r.r]
	}
	// The value of the event's one data line, as offsets into its bytes,
	// which Data then shares; only a second data line needs a buffer of
	// its own.
	line, dataStart, dataEnd := 0, 0, 0
	var joined []byte
	for {
		i := bytes.IndexByte(r.buf[r.r:r.w], '\n')
		if i < 0 {
			if spill != nil {
				spill = append(spill, r.buf[r.r:r.w]...)
			}
			r.r = r.w
			if b := raw(); len(b) > r.max {
				e.Raw = r.own(b, spill)
				return e, fmt.Errorf("%w (%d bytes)", ErrTooLong, r.max)
			}
			if r.err != nil {
				e.Raw = r.own(raw(), spill)
				return e, r.err
			}
			spill = r.fill(spill)
			continue
		}
		if spill != nil {
			spill = append(spill, r.buf[r.r:r.r+i+1]...)
		}
		r.r += i + 1
		b := raw()
		if len(b) > r.max {
			e.Raw = r.own(b, spill)
			return e, fmt.Errorf("%w (%d bytes)", ErrTooLong, r.max)
		}
		start := line
		line = len(b)
		// Byte by byte rather than with bytes.TrimSuffix and bytes.Cut:
		// their calls were a third of the time framing an event took.
		text := b[start:]
		if n := len(text); n > 0 && text[n-1] == '\n' {
			text = text[:n-1]
		}
		if n := len(text); n > 0 && text[n-1] == '\r' {
			text = text[:n-1]
		}
		if len(text) == 0 {
			if len(bytes.TrimSpace(b)) == 0 {
				// Blank lines between events: pass them on as they came.
				e.Raw = r.own(b, spill)
				return e, nil
			}
			e.Raw = r.own(b, spill)
			switch {
			case joined != nil:
				e.Data = joined
			case e.HasData:
				e.Data = e.Raw[dataStart:dataEnd:dataEnd]
			}
			return e, nil
		}
		if text[0] == ':' {
			continue
		}
		field, value := text, text[len(text):]
		if c := bytes.IndexByte(text, ':'); c >= 0 {
			field, value = text[:c], text[c+1:]
		}
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			vs := start + (len(text) - len(value)) // value's offset in the event
			switch {
			case !e.HasData:
				dataStart, dataEnd = vs, vs+len(value)
			case joined == nil:
				joined = append(append(append([]byte(nil), b[dataStart:dataEnd]...), '\n'), value...)
			default:
				joined = append(append(joined, '\n'), value...)
			}
			e.HasData = true
		case "id":
			e.ID = r.str(value)
		case "event":
			e.Name = r.str(value)
		case "retry":
			// EventSource ignores a value that is not all digits.
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				e.Retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// own is an event's bytes, b, as Next returns them: the buffer's own
// (shared), or a copy that owns them.
func (r *Reader) own(b, spill []byte) []byte {
	if spill != nil || r.shared {
		return b
	}
	return append(make([]byte, 0, max(256, len(b))), b...)
}

// fill reads from the source once more, keeping the bytes of the event
// being framed: in buf, moved to its front, or, when they fill buf, in
// spill, which it returns.
func (r *Reader) fill(spill []byte) []byte {
	if r.beforeRead != nil {
		r.beforeRead()
	}
	switch {
	case spill != nil:
		// Every byte read is in spill already.
		r.start, r.r, r.w = 0, 0, 0
	case r.start == 0 && r.w == len(r.buf):
		// The event is larger than buf: it goes on in a copy of its own.
		spill = append(make([]byte, 0, 2*len(r.buf)), r.buf[:r.w]...)
		r.start, r.r, r.w = 0, 0, 0
	default:
		n := copy(r.buf, r.buf[r.start:r.w])
		r.r -= r.start
		r.start, r.w = 0, n
	}
	// A source that keeps returning nothing is broken: bufio gives up
	// after as many reads.
	for range 100 {
		n, err := r.src.Read(r.buf[r.w:])
		r.w += n
		if err != nil {
			r.err = err
			return spill
		}
		if n > 0 {
			return spill
		}
	}
	r.err = io.ErrNoProgress
	return spill
}

// Format writes msg as an event with the given id, one data: line per line
// of msg, so that a message holding newlines (a corrupt fault's) still
// reaches the client whole.
func Format(id string, msg []byte) []byte {
	var b bytes.Buffer
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("event: message\n")
	msg = bytes.TrimSuffix(msg, []byte("\n"))
	for _, line := range bytes.Split(msg, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimSuffix(line, []byte("\r")))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
