package httpchaos

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// event is one server-sent event as it travelled: its bytes, blank line
// included, so that an event no fault touches is written on unchanged.
type event struct {
	raw  []byte
	id   string
	name string // the event: field; "" is the default "message"
	data []byte // the data: lines joined by "\n"
	// hasData says a data: field was present (a priming event has none).
	hasData bool
}

// isMessage says the event carries a JSON-RPC message: a data event of
// the default type or "message". The legacy transport's "endpoint" event
// carries a URL, and the priming event a 2025-11-25 server sends so that
// the client has an id to resume from has empty data: neither is one.
func (e *event) isMessage() bool {
	return len(bytes.TrimSpace(e.data)) > 0 && (e.name == "" || e.name == "message")
}

// errEventTooLong ends a stream whose event is larger than the cap: holding
// it whole to classify would let one stream take unbounded memory.
var errEventTooLong = errors.New("event longer than the size cap")

// eventReader frames a text/event-stream body into events, as the
// EventSource specification parses it: lines end in "\n", "\r\n" (a lone
// "\r" ends a line too but is rare enough to be read as part of the line),
// a blank line ends an event, ":" starts a comment.
type eventReader struct {
	br  *bufio.Reader
	max int
}

func newEventReader(r io.Reader, max int) *eventReader {
	return &eventReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next complete event. At the end of the stream it
// returns what was read of an unfinished event (raw set, possibly empty)
// with the error.
func (r *eventReader) next() (event, error) {
	var e event
	var data bytes.Buffer
	for {
		line, err := r.readLine(len(e.raw))
		e.raw = append(e.raw, line...)
		if err != nil {
			return e, err
		}
		text := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(text) == 0 {
			if len(bytes.TrimSpace(e.raw)) == 0 {
				// Blank lines between events: pass them on as they came.
				return e, nil
			}
			e.data = data.Bytes()
			return e, nil
		}
		if text[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(text, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if e.hasData {
				data.WriteByte('\n')
			}
			e.hasData = true
			data.Write(value)
		case "id":
			e.id = string(value)
		case "event":
			e.name = string(value)
		}
	}
}

// readLine reads one line, newline included, refusing to grow the event
// past the cap.
func (r *eventReader) readLine(have int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		line = append(line, chunk...)
		if have+len(line) > r.max {
			return line, fmt.Errorf("%w (%d bytes)", errEventTooLong, r.max)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// formatEvent writes msg as an event with the given id, one data: line per
// line of msg, so that a message holding newlines (a corrupt fault's) still
// reaches the client whole.
func formatEvent(id string, msg []byte) []byte {
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
