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
	var data bytes.Buffer
	for {
		line, err := r.readLine(len(e.Raw))
		e.Raw = append(e.Raw, line...)
		if err != nil {
			return e, err
		}
		text := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(text) == 0 {
			if len(bytes.TrimSpace(e.Raw)) == 0 {
				// Blank lines between events: pass them on as they came.
				return e, nil
			}
			e.Data = data.Bytes()
			return e, nil
		}
		if text[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(text, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if e.HasData {
				data.WriteByte('\n')
			}
			e.HasData = true
			data.Write(value)
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

// readLine reads one line, newline included, refusing to grow the event
// past the cap.
func (r *Reader) readLine(have int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		line = append(line, chunk...)
		if have+len(line) > r.max {
			return line, fmt.Errorf("%w (%d bytes)", ErrTooLong, r.max)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
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
