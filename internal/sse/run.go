package sse

import (
	"bytes"
	"fmt"
)

// A run is events read together that a relay can pass on and record as
// one piece, leaving their framing to whoever reads the record: each is a
// message event written the plainest way, so that framing it again, from
// its bytes alone, gives what Next gives. Relaying a burst of events one
// by one cost four times what the standard library's reverse proxy does
// to copy it; as a run, it costs a scan for line ends.

// plainEvent reads the event at the start of b if it is one a run may hold:
// lines that end in "\n" or "\r\n" (the Python SDK's servers end theirs
// so), an id field, an event field naming the
// default type ("" or "message") and exactly one data line whose value is
// a message (IsMessage), in any order, then the blank line. It returns the
// event's length, with its id (the last id field's value, or nil when it
// has none) and its data; n is 0 when b does not start with such an event
// whole: a comment, a retry or other field, another event type, several
// data lines, a lone "\r" line end, an event without a message, or one not all
// read yet. Next reads all of these; a relay passes them on one by one.
func plainEvent(b []byte) (n int, id, data []byte) {
	hasData := false
	for {
		// The blank line, found without a search: a run's events are
		// short, and a search for each line end was half the time taken.
		blank := 0
		switch {
		case n < len(b) && b[n] == '\n':
			blank = 1
		case n+1 < len(b) && b[n] == '\r' && b[n+1] == '\n':
			blank = 2
		}
		if blank > 0 {
			if !hasData || !isMessage(data) {
				return 0, nil, nil
			}
			return n + blank, id, data
		}
		i := bytes.IndexByte(b[n:], '\n')
		if i < 0 {
			return 0, nil, nil
		}
		line := b[n : n+i]
		n += i + 1
		// "\r\n" ends a line as "\n" does; any other "\r" is part of
		// its line, as Next reads it.
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			return 0, nil, nil
		}
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			if hasData {
				return 0, nil, nil
			}
			data, hasData = fieldValue(line[len("data:"):]), true
		case bytes.HasPrefix(line, []byte("id:")):
			id = fieldValue(line[len("id:"):])
		case bytes.HasPrefix(line, []byte("event:")):
			if v := fieldValue(line[len("event:"):]); len(v) > 0 && string(v) != "message" {
				return 0, nil, nil
			}
		default:
			return 0, nil, nil
		}
	}
}

// isMessage says data holds more than white space, as IsMessage asks:
// at once when it starts with a printable ASCII byte, as JSON does (Unicode
// has white space outside ASCII, which TrimSpace trims).
func isMessage(data []byte) bool {
	if len(data) > 0 && data[0] > ' ' && data[0] < 0x7f {
		return true
	}
	return len(bytes.TrimSpace(data)) > 0
}

// fieldValue is a field's value: what follows its colon, less one space.
func fieldValue(v []byte) []byte {
	if len(v) > 0 && v[0] == ' ' {
		return v[1:]
	}
	return v
}

// PeekRun returns the events that lie whole in the reader's buffer from
// where it stands, up to the first that a run may not hold (plainEvent) or
// that is longer than the cap: as one slice of the buffer, with how many
// they are and the last non-empty id among them. It reads nothing from the
// source and does not move the reader: Skip(len(run)) does, once the relay
// has taken the run. The run is the buffer's own, valid until the reader
// next reads, and keeps its capacity as an event's Raw does (Adjacent).
// Only a shared reader's buffer may be handed out so; another returns none.
func (r *Reader) PeekRun() (run []byte, n int, lastID string) {
	if !r.shared {
		return nil, 0, ""
	}
	rest := r.buf[r.r:r.w]
	end := 0
	var last []byte
	for end < len(rest) {
		size, id, _ := plainEvent(rest[end:])
		if size == 0 || size > r.max {
			break
		}
		if len(id) > 0 {
			last = id
		}
		end += size
		n++
	}
	return r.buf[r.r : r.r+end], n, r.str(last)
}

// Fill reads from the source once if every byte read so far has been
// framed, and says whether it did: so that an event the server sent alone
// comes as a run too, rather than through Next. Bytes of an event not
// all read are left to Next, which reads until the event is whole; a
// whole event PeekRun would not take must be framed, not waited behind.
func (r *Reader) Fill() bool {
	if !r.shared || r.err != nil || r.r != r.w {
		return false
	}
	r.start = r.r
	r.fill(nil)
	return true
}

// Skip moves the reader past the first n bytes it has read and not framed:
// a run PeekRun returned.
func (r *Reader) Skip(n int) {
	if n < 0 || n > r.w-r.r {
		panic(fmt.Sprintf("sse: Skip(%d) with %d bytes unframed", n, r.w-r.r))
	}
	r.r += n
}

// SplitRun calls fn with the id and data of each event of run, events
// PeekRun returned (which a transcript keeps as they came), and says how
// many there were. It fails if run is not such events, whole.
func SplitRun(run []byte, fn func(id, data []byte) error) (int, error) {
	n := 0
	for len(run) > 0 {
		size, id, data := plainEvent(run)
		if size == 0 {
			return n, fmt.Errorf("event %d of the run is not a message event of one data line, whole: %.80q", n+1, run)
		}
		if err := fn(id, data); err != nil {
			return n, err
		}
		run = run[size:]
		n++
	}
	return n, nil
}
