package sse_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/internal/sse"
)

// runEvent is what a relay takes from an event: its bytes, its id and
// data, and whether it carries a message.
type runEvent struct {
	Raw, ID, Data string
	Message       bool
}

// readAsRelay reads in as the HTTP proxy does, taking every run PeekRun
// offers and framing the rest with Next, and returns the events in order
// (a run's cut up by SplitRun), how many came in runs, and the error that
// ended the stream.
func readAsRelay(t *testing.T, src io.Reader, max, size int) (events []runEvent, inRuns int, err error) {
	t.Helper()
	r := sse.NewReaderSize(src, max, size, true, func() {})
	for range 1 << 16 {
		run, n, last := r.PeekRun()
		if n == 0 && r.Fill() {
			run, n, last = r.PeekRun()
		}
		if n > 0 {
			var ids []string
			got, serr := sse.SplitRun(run, func(id, data []byte) error {
				ids = append(ids, string(id))
				events = append(events, runEvent{ID: string(id), Data: string(data), Message: true})
				return nil
			})
			if serr != nil || got != n {
				t.Fatalf("SplitRun of a run of %d events read %d (%v): %q", n, got, serr, run)
			}
			// The run's bytes go to the first of its events: split
			// again below against the reference's.
			events[len(events)-n].Raw = string(run)
			if want := lastNonEmpty(ids); last != want {
				t.Fatalf("PeekRun's last id %q; its events' last is %q", last, want)
			}
			r.Skip(len(run))
			inRuns += n
			continue
		}
		e, nerr := r.Next()
		if nerr != nil {
			return events, inRuns, nerr
		}
		events = append(events, runEvent{Raw: string(e.Raw), ID: e.ID, Data: string(e.Data), Message: e.IsMessage()})
	}
	t.Fatal("the stream did not end")
	return
}

func lastNonEmpty(ids []string) string {
	for i := len(ids) - 1; i >= 0; i-- {
		if ids[i] != "" {
			return ids[i]
		}
	}
	return ""
}

// readByNext reads in with Next alone, as the reference.
func readByNext(src io.Reader, max int) (events []runEvent, err error) {
	r := sse.NewReader(src, max)
	for {
		e, err := r.Next()
		if err != nil {
			return events, err
		}
		events = append(events, runEvent{Raw: string(e.Raw), ID: e.ID, Data: string(e.Data), Message: e.IsMessage()})
	}
}

// joinRuns puts the bytes of a run's events, kept on its first, back on
// each event, cut where the reference's events end, so that the two lists
// compare event by event.
func joinRuns(got, want []runEvent) []runEvent {
	out := append([]runEvent(nil), got...)
	for i := 0; i < len(out) && i < len(want); i++ {
		if !out[i].Message || len(out[i].Raw) <= len(want[i].Raw) {
			continue
		}
		rest := out[i].Raw
		for j := i; j < len(out) && j < len(want) && strings.HasPrefix(rest, want[j].Raw); j++ {
			if j > i && out[j].Raw != "" {
				break
			}
			out[j].Raw, rest = want[j].Raw, rest[len(want[j].Raw):]
		}
	}
	return out
}

// TestPeekRun: a burst of plain message events is one run; what a run may
// not hold (a comment, a priming event, an endpoint event, two data lines,
// "\r\n", an event not all read) ends it and goes by Next, and the events
// are the ones Next alone reads.
func TestPeekRun(t *testing.T) {
	msg := func(i string) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":` + i + `}}`
	}
	for _, tc := range []struct {
		name   string
		in     string
		inRuns int
	}{
		{"burst", "id: 1\ndata: " + msg("1") + "\n\nid: 2\ndata: " + msg("2") + "\n\nevent: message\nid:3\ndata:" + msg("3") + "\n\n", 3},
		{"no ids", "data: " + msg("1") + "\n\ndata: " + msg("2") + "\n\n", 2},
		{"priming event first", "id: 0\ndata: \n\nid: 1\ndata: " + msg("1") + "\n\n", 1},
		{"comment between", "data: " + msg("1") + "\n\n: keep-alive\n\ndata: " + msg("2") + "\n\n", 2},
		{"two data lines", "data: {\"a\":\ndata: 1}\n\ndata: " + msg("2") + "\n\n", 1},
		{"crlf", "data: " + msg("1") + "\r\n\r\nevent: message\r\nid: 2\r\ndata: " + msg("2") + "\r\n\r\ndata: " + msg("3") + "\n\n", 3},
		// A lone "\r" is part of its line: data, here, as Next reads it.
		{"lone cr", "data: " + msg("1") + "\r\rid: 2\n\ndata: " + msg("2") + "\r\r\n\r\n", 2},
		{"endpoint", "event: endpoint\ndata: /messages?sessionId=x\n\ndata: " + msg("2") + "\n\n", 1},
		{"retry", "retry: 1000\ndata: " + msg("1") + "\n\n", 0},
		{"unfinished", "data: " + msg("1") + "\n\ndata: " + msg("2"), 1},
		{"white space data", "data: \u00a0\n\ndata: \t\n\ndata: " + msg("2") + "\n\n", 1},
		{"blank lines between", "data: " + msg("1") + "\n\n\n\ndata: " + msg("2") + "\n\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, werr := readByNext(strings.NewReader(tc.in), 1<<20)
			got, inRuns, gerr := readAsRelay(t, strings.NewReader(tc.in), 1<<20, 64<<10)
			if !errors.Is(gerr, io.EOF) || !errors.Is(werr, io.EOF) {
				t.Fatalf("ended with %v; Next alone with %v", gerr, werr)
			}
			if diff := cmp.Diff(want, joinRuns(got, want)); diff != "" {
				t.Errorf("events (-Next alone +runs and Next):\n%s", diff)
			}
			if inRuns != tc.inRuns {
				t.Errorf("%d events came in runs; want %d", inRuns, tc.inRuns)
			}
		})
	}
}

// TestSplitRunRefusesWhatNoRunHolds: a transcript whose run was altered is
// an error, not events made up.
func TestSplitRunRefusesWhatNoRunHolds(t *testing.T) {
	for _, run := range []string{"data: {}\n", ": c\n\n", "data: {}\r\n\r", "event: x\ndata: {}\n\n", "data:  \n\n"} {
		if _, err := sse.SplitRun([]byte(run), func(id, data []byte) error { return nil }); err == nil {
			t.Errorf("SplitRun(%q) took it", run)
		}
	}
}

// FuzzPeekRun holds runs to Next on any bytes a server could send: read
// as the relay reads (runs where it can, Next elsewhere, through small
// buffers and one byte at a time), a stream gives the events Next alone
// gives, and its bytes whole.
func FuzzPeekRun(f *testing.F) {
	for _, s := range []string{
		"id: 1\ndata: {\"a\":1}\n\nid: 2\ndata: {\"a\":2}\n\n",
		"event: message\nid: 7\ndata: {\"a\":1}\n\n: c\n\ndata: x\n\n",
		"data: {\"a\":\r\ndata: 1}\r\n\r\n",
		"id: 0\ndata:\n\nid: 1\n\ndata: {}\n\n\n",
		"event: endpoint\ndata: /messages?sessionId=x\n\ndata: {}\n\n",
		"data: {}\n\ndata: {\"a\"",
	} {
		f.Add([]byte(s), uint16(300), uint8(0), false)
		f.Add([]byte(s), uint16(20), uint8(7), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint16, size uint8, oneByte bool) {
		max := int(limit%512) + 1
		bufSize := 64 << 10
		if size > 0 {
			bufSize = int(size%64) + 1
		}
		want, werr := readByNext(bytes.NewReader(in), max)
		var src io.Reader = bytes.NewReader(in)
		if oneByte {
			src = iotest.OneByteReader(src)
		}
		got, _, gerr := readAsRelay(t, src, max, bufSize)
		got = joinRuns(got, want)
		if errors.Is(werr, sse.ErrTooLong) || errors.Is(gerr, sse.ErrTooLong) {
			// Where an event over the cap ends the stream depends on
			// the buffer; the events before it must agree.
			n := min(len(want), len(got))
			want, got = want[:n], got[:n]
		} else if !errors.Is(gerr, io.EOF) || !errors.Is(werr, io.EOF) {
			t.Fatalf("ended with %v; Next alone with %v", gerr, werr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("events of %q (-Next alone +runs and Next):\n%s", in, diff)
		}
	})
}

// BenchmarkPeekRun is BenchmarkReader's stream taken as the relay takes a
// burst: runs, and Next for what no run holds.
func BenchmarkPeekRun(b *testing.B) {
	var stream strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&stream, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":%d}}\n\n", i, i)
	}
	s := stream.String()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		r := sse.NewSharedReader(strings.NewReader(s), 1<<20, func() {})
		for {
			run, n, _ := r.PeekRun()
			if n == 0 && r.Fill() {
				run, n, _ = r.PeekRun()
			}
			if n > 0 {
				r.Skip(len(run))
				continue
			}
			if _, err := r.Next(); err != nil {
				break
			}
		}
		r.Release()
	}
}
