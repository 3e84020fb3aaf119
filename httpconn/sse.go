package httpconn

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
)

// event is one server-sent event, as the EventSource specification parses
// it.
type event struct {
	id, name string
	hasID    bool
	data     []byte
	retryMS  int
}

// errEventTooLong ends a stream whose event is larger than the reader's cap.
var errEventTooLong = errors.New("an event is larger than the cap")

type eventReader struct {
	br  *bufio.Reader
	max int
}

func newEventReader(r io.Reader, max int) *eventReader {
	return &eventReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next event that carries data or an id; a stream's end
// is io.EOF.
func (r *eventReader) next() (event, error) {
	var ev event
	var data [][]byte
	size := 0
	for {
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: gather it whole, within the cap.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull && len(long) <= r.max {
				line, err = r.br.ReadSlice('\n')
				long = append(long, line...)
			}
			if len(long) > r.max {
				return ev, errEventTooLong
			}
			line = long
		}
		if err != nil && len(line) == 0 {
			if err == io.EOF && (len(data) > 0 || ev.hasID) {
				err = io.EOF // an unterminated last event is discarded, as EventSource does
			}
			return event{}, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if len(data) > 0 || ev.hasID {
				ev.data = bytes.Join(data, []byte("\n"))
				return ev, nil
			}
			ev = event{}
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			size += len(value)
			if size > r.max {
				return ev, errEventTooLong
			}
			data = append(data, append([]byte(nil), value...))
		case "id":
			if !bytes.ContainsRune(value, 0) {
				ev.id, ev.hasID = string(value), true
			}
		case "event":
			ev.name = string(value)
		case "retry":
			if n, err := strconv.Atoi(strings.TrimSpace(string(value))); err == nil {
				ev.retryMS = n
			}
		}
		if err != nil {
			return event{}, err
		}
	}
}

// isMessage says the event carries a JSON-RPC message.
func (e event) isMessage() bool {
	return len(bytes.TrimSpace(e.data)) > 0 && (e.name == "" || e.name == "message")
}
