package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
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
	br  *bufio.Reader
	max int
}

// NewReader reads events from r, none larger than max bytes.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next complete event. At the end of the stream it
// returns what was read of an unfinished event (Raw set, possibly empty)
// with the error.
func (r *Reader) Next() (Event, error) {
	var e Event
	// The value of the event's one data line, as offsets into e.Raw, which
	// Data then shares; only a second data line needs a buffer of its own.
	dataStart, dataEnd := 0, 0
	var joined []byte
	for {
		line, err := r.readLine(len(e.Raw))
		start := len(e.Raw)
		if e.Raw == nil {
			// Room for a typical event at once: an id, a data line, a
			// blank line.
			e.Raw = make([]byte, 0, max(256, 2*len(line)+16))
		}
		e.Raw = append(e.Raw, line...)
		if err != nil {
			return e, err
		}
		text := bytes.TrimSuffix(bytes.TrimSuffix(e.Raw[start:], []byte("\n")), []byte("\r"))
		if len(text) == 0 {
			if len(bytes.TrimSpace(e.Raw)) == 0 {
				// Blank lines between events: pass them on as they came.
				return e, nil
			}
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
		field, value, _ := bytes.Cut(text, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			vs := start + (len(text) - len(value)) // value's offset in e.Raw
			switch {
			case !e.HasData:
				dataStart, dataEnd = vs, vs+len(value)
			case joined == nil:
				joined = append(append(append([]byte(nil), e.Raw[dataStart:dataEnd]...), '\n'), value...)
			default:
				joined = append(append(joined, '\n'), value...)
			}
			e.HasData = true
		case "id":
			e.ID = string(value)
		case "event":
			e.Name = string(value)
		case "retry":
			// EventSource ignores a value that is not all digits.
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				e.Retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// readLine returns the next line, newline included, or what there is at
// the end of the stream. A line that fits the read buffer is returned as
// the buffer's bytes, valid until the next read.
func (r *Reader) readLine(have int) ([]byte, error) {
	chunk, err := r.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		if have+len(chunk) > r.max {
			return chunk, fmt.Errorf("%w (%d bytes)", ErrTooLong, r.max)
		}
		return chunk, err
	}
	line := append([]byte(nil), chunk...)
	for {
		if have+len(line) > r.max {
			return line, fmt.Errorf("%w (%d bytes)", ErrTooLong, r.max)
		}
		chunk, err := r.br.ReadSlice('\n')
		line = append(line, chunk...)
		if have+len(line) > r.max {
			return line, fmt.Errorf("%w (%d bytes)", ErrTooLong, r.max)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
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
