package chaos

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// The line reader hands out frames from its buffer: each must be the line
// it was, unchanged until the reader says it will reuse the buffer
// (beforeRead), however the bytes come.
func TestLineReaderFramesStayUntilBeforeRead(t *testing.T) {
	long := strings.Repeat("y", 3*readBuffer+17) + "\n"
	in := "a\n" + strings.Repeat("x", readBuffer-3) + "\n\n" + long + `{"id":1}` + "\n" + "no newline at the end"
	for _, tc := range []struct {
		name string
		r    func(io.Reader) io.Reader
	}{
		{"whole reads", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"half reads", iotest.HalfReader},
		{"data with the error", iotest.DataErrReader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type handed struct{ frame, copy []byte }
			var since []handed
			lr := newLineReader(tc.r(strings.NewReader(in)), 1<<20, func() {
				for _, h := range since {
					if !bytes.Equal(h.frame, h.copy) {
						t.Fatalf("a frame changed before the reader said it would reuse its buffer: %.40q became %.40q", h.copy, h.frame)
					}
				}
				since = since[:0]
			})
			var got []string
			for {
				f, err := lr.next()
				if len(f.raw) > 0 {
					got = append(got, string(f.raw))
					since = append(since, handed{f.raw, bytes.Clone(f.raw)})
				}
				if err != nil {
					if err != io.EOF {
						t.Fatal(err)
					}
					break
				}
			}
			want := strings.SplitAfter(in, "\n")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("frames (-want +got):\n%.2000s", diff)
			}
		})
	}
}

// writeCounter counts the writes that reach it.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// The frames of one read go out in one write, straight from where they
// lie, and only when the writer is flushed; a frame queued as a copy
// between them keeps its place.
func TestFramesOfOneReadGoOutInOneWrite(t *testing.T) {
	read := []byte("{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":4}\n")
	frames := bytes.SplitAfter(read, []byte("\n"))[:4]

	var w writeCounter
	e := newEndWriter(&w, nil)
	for i, f := range frames {
		if _, err := e.putFrame(f, int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if w.writes != 0 {
		t.Fatalf("%d writes before the flush; a frame must wait for it", w.writes)
	}
	if _, err := e.flush(); err != nil {
		t.Fatal(err)
	}
	if w.writes != 1 || w.String() != string(read) {
		t.Errorf("%d writes of %q; want one of %q", w.writes, w.String(), read)
	}

	w = writeCounter{}
	e = newEndWriter(&w, nil)
	e.putFrame(frames[0], 1)
	e.putFrame(frames[1], 2)
	e.put([]byte("injected\n"), 0)
	e.putFrame(frames[2], 3)
	e.putFrame(frames[3], 4)
	if _, err := e.flush(); err != nil {
		t.Fatal(err)
	}
	want := string(frames[0]) + string(frames[1]) + "injected\n" + string(frames[2]) + string(frames[3])
	if w.String() != want {
		t.Errorf("wrote %q; want %q", w.String(), want)
	}
	if w.writes > 2 {
		t.Errorf("%d writes; want at most 2", w.writes)
	}
}

// A failed write loses every frame queued, borrowed or copied.
func TestFailedWriteLosesTheQueuedFrames(t *testing.T) {
	read := []byte("a\nb\nc\n")
	e := newEndWriter(failingWriter{}, nil)
	e.putFrame(read[0:2], 1)
	e.put([]byte("x\n"), 2)
	e.putFrame(read[4:6], 3)
	lost, err := e.flush()
	if err == nil {
		t.Fatal("the flush did not fail")
	}
	if diff := cmp.Diff([]int64{1, 2, 3}, lost); diff != "" {
		t.Errorf("lost frames (-want +got):\n%s", diff)
	}
}

type failingWriter struct{}

func (failingWriter) Write(p []byte) (int, error) { return 0, io.ErrClosedPipe }

// A run holds whole lines only: the end of a line over the cap comes as
// its last piece, and the lines after it in the same read as lines.
func TestRunsEndAnOverlongLineAlone(t *testing.T) {
	// Pieces are cut from lines longer than the read buffer.
	long := strings.Repeat("y", 3*readBuffer+5) + "\n"
	in := long + "a\n" + "b\n" + long + "c\n"
	lr := newLineReader(strings.NewReader(in), 1000, nil)
	var pieces, lines []string
	for {
		f, err := lr.run()
		switch {
		case f.part > 0:
			pieces = append(pieces, string(f.raw))
		case len(f.raw) > 0:
			lines = append(lines, strings.SplitAfter(string(f.raw), "\n")...)
		}
		if err != nil {
			break
		}
	}
	if got := strings.Join(pieces, ""); got != long+long {
		t.Errorf("the over-long lines' pieces hold %d bytes; want %d", len(got), 2*len(long))
	}
	for _, p := range pieces {
		if strings.Count(p, "\n") > 1 || (strings.Contains(p, "\n") && !strings.HasSuffix(p, "\n")) {
			t.Errorf("a piece holds more than the end of its line: %.40q...", p)
		}
	}
	if diff := cmp.Diff([]string{"a\n", "b\n", "", "c\n", ""}, lines); diff != "" {
		t.Errorf("lines after the over-long ones (-want +got):\n%s", diff)
	}
}

// A throttle set while frames of a read wait to be written paces the next
// one of them: it goes out at once, paced, after those before it.
func TestThrottleSetMidRunPacesTheNextFrame(t *testing.T) {
	read := []byte("{\"id\":1}\n{\"id\":2}\n")
	var w writeCounter
	e := newEndWriter(&w, nil)
	e.putFrame(read[:9], 1)
	e.setPace(1<<30, 0, nil)
	if _, err := e.putFrame(read[9:], 2); err != nil {
		t.Fatal(err)
	}
	if w.String() != string(read) {
		t.Errorf("before the flush the peer got %q; want both frames, the second paced", w.String())
	}
}
