package sse

import "io"

// NewReaderSize is NewReader with a buffer of size bytes, so that tests
// reach events larger than the buffer with small inputs.
func NewReaderSize(r io.Reader, max, size int, shared bool, beforeRead func()) *Reader {
	rd := newReaderSize(r, max, size)
	rd.shared, rd.beforeRead = shared, beforeRead
	return rd
}
