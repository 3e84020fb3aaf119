package chaos

import (
	"bytes"
	"io"
)

// DefaultMaxLine is the longest line classified as one message. Longer lines
// still pass through byte for byte, in chunks of this size.
const DefaultMaxLine = 64 << 20

// readBuffer is the size of each pipe read; it is also the most a stall can
// leave unread in our buffer after it starts.
const readBuffer = 64 << 10

// frame is one newline-terminated line, or a piece of a line over the cap.
type frame struct {
	raw []byte
	// part counts the pieces of an over-long line: 0 for a whole line, 1 for
	// its first piece, and so on. Pieces are forwarded but not classified.
	part int
}

// lineReader splits a byte stream into frames without copying a line that
// fits in its read buffer. A frame's bytes stay valid, and unchanged, until
// the reader next calls beforeRead: the relay hands the frames of one read
// to the writer as they lie in the buffer, and writes them out in one
// system call from beforeRead, before the buffer is reused.
type lineReader struct {
	r   io.Reader
	buf []byte
	// The bytes read and not yet returned are buf[start:end].
	start, end int
	err        error // the read error, returned once the bytes before it are
	max        int
	// beforeRead, when not nil, is called before the buffer's bytes move
	// or are overwritten, which is also the moment the reader may block;
	// afterRead once a read has returned bytes.
	beforeRead, afterRead func()
	// parts holds copies of the pieces of a line longer than the read
	// buffer, joined once the line ends: growing one buffer as pieces came
	// copied a 64 MiB line about five times over.
	parts   [][]byte
	size    int // bytes in parts
	partial int // pieces of the current over-long line already returned
}

func newLineReader(r io.Reader, max int, beforeRead func()) *lineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &lineReader{r: r, buf: make([]byte, readBuffer), max: max, beforeRead: beforeRead}
}

// maxEmptyReads is how many reads in a row may return nothing before the
// reader gives up, as bufio does, rather than spin on a broken reader.
const maxEmptyReads = 100

// next returns the next frame. At the end of the stream it returns the final
// unterminated bytes (if any) with a nil error, then a zero frame with the
// read error.
func (l *lineReader) next() (frame, error) { return l.read(false) }

// run is next for a caller that treats lines alike: the frame it returns
// holds every whole line the buffer holds, one or more, so that they are
// handled at once. A line longer than the buffer, and the unterminated end
// of the stream, come as next returns them.
func (l *lineReader) run() (frame, error) { return l.read(true) }

func (l *lineReader) read(all bool) (frame, error) {
	if l.size > 0 {
		clear(l.parts)
		l.parts, l.size = l.parts[:0], 0
	}
	for empty := 0; ; {
		if i := bytes.IndexByte(l.buf[l.start:l.end], '\n'); i >= 0 {
			if all && l.size == 0 && l.partial == 0 {
				i = bytes.LastIndexByte(l.buf[l.start:l.end], '\n')
			}
			line := l.buf[l.start : l.start+i+1]
			l.start += i + 1
			if l.size == 0 {
				return l.finish(line), nil
			}
			return l.finish(l.join(line)), nil
		}
		if l.err != nil {
			rest := l.buf[l.start:l.end]
			l.start = l.end
			if l.size+len(rest) > 0 {
				return l.finish(l.join(rest)), nil // the stream ended mid-line; err comes next call
			}
			if l.beforeRead != nil {
				// The end: what the caller queued goes out, as before a read.
				l.beforeRead()
			}
			return frame{}, l.err
		}
		if l.start == 0 && l.end == len(l.buf) {
			// A line longer than the buffer: keep this piece aside.
			l.parts = append(l.parts, bytes.Clone(l.buf))
			l.size += len(l.buf)
			l.end = 0
			if l.size >= l.max {
				l.partial++
				return frame{raw: l.join(nil), part: l.partial}, nil
			}
		}
		if l.beforeRead != nil {
			l.beforeRead()
		}
		if l.start > 0 {
			l.end = copy(l.buf, l.buf[l.start:l.end])
			l.start = 0
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		switch {
		case err != nil:
			l.err = err
		case n == 0:
			if empty++; empty >= maxEmptyReads {
				l.err = io.ErrNoProgress
			}
		default:
			empty = 0
		}
		if n > 0 && l.afterRead != nil {
			l.afterRead()
		}
	}
}

// join returns the pieces held and tail as one slice of exactly their size.
func (l *lineReader) join(tail []byte) []byte {
	b := make([]byte, 0, l.size+len(tail))
	for _, p := range l.parts {
		b = append(b, p...)
	}
	clear(l.parts) // the pieces are garbage now, not in a minute
	return append(b, tail...)
}

func (l *lineReader) finish(b []byte) frame {
	if l.partial > 0 {
		l.partial++
		f := frame{raw: b, part: l.partial}
		l.partial = 0
		return f
	}
	return frame{raw: b}
}
