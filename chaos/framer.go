package chaos

import (
	"bufio"
	"bytes"
	"errors"
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

// lineReader splits a byte stream into frames without copying a line that fits
// in its read buffer. A frame's bytes are valid until the next call to next.
type lineReader struct {
	r   *bufio.Reader
	max int
	// parts holds copies of the pieces of a line longer than the read
	// buffer, joined once the line ends: growing one buffer as pieces came
	// copied a 64 MiB line about five times over.
	parts   [][]byte
	size    int // bytes in parts
	partial int // pieces of the current over-long line already returned
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &lineReader{r: bufio.NewReaderSize(r, readBuffer), max: max}
}

// next returns the next frame. At the end of the stream it returns the final
// unterminated bytes (if any) with a nil error, then a zero frame with the
// read error.
func (l *lineReader) next() (frame, error) {
	clear(l.parts)
	l.parts, l.size = l.parts[:0], 0
	for {
		chunk, err := l.r.ReadSlice('\n')
		if err == nil && l.size == 0 {
			return l.finish(chunk), nil
		}
		switch {
		case err == nil:
			return l.finish(l.join(chunk)), nil
		case errors.Is(err, bufio.ErrBufferFull):
			l.parts = append(l.parts, bytes.Clone(chunk))
			l.size += len(chunk)
			if l.size >= l.max {
				l.partial++
				return frame{raw: l.join(nil), part: l.partial}, nil
			}
		case l.size+len(chunk) > 0:
			return l.finish(l.join(chunk)), nil // the stream ended mid-line; err comes next call
		default:
			return frame{}, err
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
