package sse_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/internal/sse"
)

// The framer keeps each event's bytes as they came, whatever the line
// endings, and reads its fields as EventSource does.
func TestReader(t *testing.T) {
	type got struct {
		Raw, ID, Name, Data string
		HasData, Message    bool
		Retry               time.Duration
	}
	for _, tc := range []struct {
		name, in string
		want     []got
		end      error
	}{
		{"one message", "event: message\nid: 7\ndata: {\"a\":1}\n\n", []got{
			{Raw: "event: message\nid: 7\ndata: {\"a\":1}\n\n", ID: "7", Name: "message", Data: `{"a":1}`, HasData: true, Message: true}}, io.EOF},
		{"crlf and multi-line data", "data: {\"a\":\r\ndata: 1}\r\n\r\n", []got{
			{Raw: "data: {\"a\":\r\ndata: 1}\r\n\r\n", Data: "{\"a\":\n1}", HasData: true, Message: true}}, io.EOF},
		{"priming event and comment", ": ping\nid: 0\ndata:\n\nid: 1\n\n", []got{
			{Raw: ": ping\nid: 0\ndata:\n\n", ID: "0", HasData: true},
			{Raw: "id: 1\n\n", ID: "1"}}, io.EOF},
		{"retry, and a retry that is not a number", "retry: 1500\n\nretry: 2s\n\n", []got{
			{Raw: "retry: 1500\n\n", Retry: 1500 * time.Millisecond},
			{Raw: "retry: 2s\n\n"}}, io.EOF},
		{"legacy endpoint", "event: endpoint\ndata: /messages?sessionId=x\n\n", []got{
			{Raw: "event: endpoint\ndata: /messages?sessionId=x\n\n", Name: "endpoint", Data: "/messages?sessionId=x", HasData: true}}, io.EOF},
		{"unfinished at the end", "data: {\"a\"", []got{{Raw: "data: {\"a\""}}, io.EOF},
		{"over the cap", "data: " + strings.Repeat("x", 100) + "\n\n", []got{{Raw: "data: " + strings.Repeat("x", 100) + "\n"}}, sse.ErrTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sse.NewReader(strings.NewReader(tc.in), 64)
			var evs []got
			var err error
			for {
				var e sse.Event
				e, err = r.Next()
				if len(e.Raw) > 0 {
					evs = append(evs, got{string(e.Raw), e.ID, e.Name, string(e.Data), e.HasData, e.IsMessage() && err == nil, e.Retry})
				}
				if err != nil {
					break
				}
			}
			if !errors.Is(err, tc.end) {
				t.Errorf("end = %v, want %v", err, tc.end)
			}
			if diff := cmp.Diff(tc.want, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// A formatted event reads back as the message it was made of, newlines
// and all.
func TestFormat(t *testing.T) {
	for _, tc := range []struct{ name, id, msg, data string }{
		{"with an id", "4", `{"a":1}`, `{"a":1}`},
		{"no id, a trailing newline", "", "{\"a\":1}\n", `{"a":1}`},
		{"newlines inside", "", "{\"a\":\r\n1}", "{\"a\":\n1}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := sse.NewReader(strings.NewReader(string(sse.Format(tc.id, []byte(tc.msg)))), 1<<10).Next()
			if err != nil {
				t.Fatal(err)
			}
			got := []string{e.ID, string(e.Data)}
			if diff := cmp.Diff([]string{tc.id, tc.data}, got); diff != "" || !e.IsMessage() {
				t.Errorf("event (-want +got):\n%s (a message: %v)", diff, e.IsMessage())
			}
		})
	}
}

// BenchmarkReader reads a stream of progress events as a server sends them:
// id, data, blank line; each event owning its bytes (copy), or in the
// reader's buffer, as the proxy reads them (shared).
func BenchmarkReader(b *testing.B) {
	var stream strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&stream, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":%d}}\n\n", i, i)
	}
	s := stream.String()
	for _, shared := range []bool{false, true} {
		name := "copy"
		if shared {
			name = "shared"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				r := sse.NewReader(strings.NewReader(s), 1<<20)
				if shared {
					r = sse.NewSharedReader(strings.NewReader(s), 1<<20, func() {})
				}
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
			}
		})
	}
}

// refEvent is what the EventSource parsing rules make of one event, read
// by refEvents.
type refEvent struct {
	ID, Name, Data string
	HasData        bool
	Retry          time.Duration
}

// refEvents parses a stream the plain way, apart from the Reader: split
// into lines ending in "\n" or "\r\n" first (the Reader's one departure
// from EventSource, a lone "\r" read as part of its line, is kept), then
// each line is a blank line that ends an event, a comment, or a field
// "name: value" (one space after the colon dropped; no colon, no value).
// It returns the events a blank line ended, and whether bytes of an
// unfinished one are left at the end.
func refEvents(in []byte) (events []refEvent, unfinished bool) {
	var e refEvent
	var data []string
	var raw int // bytes of the event so far
	for len(in) > 0 {
		n := bytes.IndexByte(in, '\n') + 1
		if n == 0 {
			return events, true
		}
		line := in[:n]
		in = in[n:]
		raw += len(line)
		text := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
		switch {
		case text == "":
			e.HasData = data != nil
			e.Data = strings.Join(data, "\n")
			events = append(events, e)
			e, data, raw = refEvent{}, nil, 0
			continue
		case text[0] == ':':
			continue
		}
		name, value, _ := strings.Cut(text, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "data":
			data = append(data, value)
		case "id":
			e.ID = value
		case "event":
			e.Name = value
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				if ms, err := strconv.ParseUint(value, 10, 31); err == nil {
					e.Retry = time.Duration(ms) * time.Millisecond
				}
			}
		}
	}
	return events, raw > 0
}

// FuzzReader holds the Reader, on any bytes a server could send, to the
// proxy's promise and to the parsing rules: the events' bytes joined are
// the stream's bytes exactly (nothing dropped, nothing added), and each
// event says what refEvents reads in it. An event over the cap ends the
// stream with ErrTooLong, having returned only bytes of the stream. It
// reads through buffers smaller than the events and one byte at a time,
// and, sharing its buffer, it keeps every event it returned intact until
// it announces its next read.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"event: message\nid: 7\ndata: {\"a\":1}\n\n",
		"data: {\"a\":\r\ndata: 1}\r\n\r\n",
		": ping\nid: 0\ndata:\n\nid: 1\n\n",
		"retry: 1500\n\nretry: 2s\n\n\n\n",
		"event: endpoint\ndata: /messages?sessionId=x\n\n",
		"data\ndata:\ndata:  two spaces\n\ndata: {\"a\"",
		"id: 1\r\ndata: x\r\r\n\r\n \n\n",
	} {
		f.Add([]byte(s), uint16(64), uint8(0), false, false)
		f.Add([]byte(s), uint16(64), uint8(5), true, true)
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint16, size uint8, shared, oneByte bool) {
		max := int(limit%512) + 1
		var src io.Reader = bytes.NewReader(in)
		if oneByte {
			src = iotest.OneByteReader(src)
		}
		// held are the events returned since the last read, as returned
		// and as copied then: a shared buffer must not move under them.
		type held struct{ raw, data, rawCopy, dataCopy []byte }
		var since []held
		beforeRead := func() {
			for _, h := range since {
				if !bytes.Equal(h.raw, h.rawCopy) || !bytes.Equal(h.data, h.dataCopy) {
					t.Fatalf("an event changed before the reader announced its read: %q, was %q", h.raw, h.rawCopy)
				}
			}
			since = nil
		}
		r := sse.NewReader(src, max)
		if size > 0 || shared {
			r = sse.NewReaderSize(src, max, int(size%64)+1, shared, beforeRead)
		}
		var joined []byte
		var got []refEvent
		var err error
		for range len(in) + 2 {
			var e sse.Event
			e, err = r.Next()
			joined = append(joined, e.Raw...)
			since = append(since, held{e.Raw, e.Data, bytes.Clone(e.Raw), bytes.Clone(e.Data)})
			if err != nil {
				break
			}
			if len(e.Raw) > max {
				t.Fatalf("an event of %d bytes passed the %d-byte cap", len(e.Raw), max)
			}
			if ev := (refEvent{e.ID, e.Name, string(e.Data), e.HasData, e.Retry}); ev != (refEvent{}) {
				got = append(got, ev)
			}
		}
		beforeRead()
		switch {
		case errors.Is(err, sse.ErrTooLong):
			if !bytes.HasPrefix(in, joined) {
				t.Fatalf("the events' bytes %q are not the start of the stream %q", joined, in)
			}
			return
		case !errors.Is(err, io.EOF):
			t.Fatalf("the stream ended with %v, not EOF (or did not end)", err)
		case !bytes.Equal(joined, in):
			t.Fatalf("the events' bytes %q are not the stream's %q", joined, in)
		}
		want, _ := refEvents(in)
		// Events that say nothing (blank lines between events, which the
		// Reader passes on as events of their own, or only unknown fields)
		// are left out on both sides: their bytes are checked above.
		var kept []refEvent
		for _, e := range want {
			if e != (refEvent{}) {
				kept = append(kept, e)
			}
		}
		if diff := cmp.Diff(kept, got); diff != "" {
			t.Fatalf("events of %q (-rules +reader):\n%s", in, diff)
		}
	})
}

// A released shared reader reads nothing more: its buffer may be another
// stream's by then. Releasing twice, or a reader NewReader made, is
// harmless.
func TestRelease(t *testing.T) {
	const two = "data: 1\n\ndata: 2\n\n"
	shared := sse.NewSharedReader(strings.NewReader(two), 1<<20, nil)
	if ev, err := shared.Next(); err != nil || string(ev.Data) != "1" {
		t.Fatalf("first event: %q, %v", ev.Data, err)
	}
	shared.Release()
	shared.Release()
	if ev, err := shared.Next(); !errors.Is(err, sse.ErrReleased) || len(ev.Raw) != 0 {
		t.Errorf("after Release: %q, %v; want nothing and ErrReleased", ev.Raw, err)
	}
	if run, n, _ := shared.PeekRun(); n != 0 || len(run) != 0 || shared.Fill() {
		t.Errorf("after Release: PeekRun gave %d events (%q), or Fill read", n, run)
	}

	own := sse.NewReader(strings.NewReader(two), 1<<20)
	own.Release()
	for _, want := range []string{"1", "2"} {
		if ev, err := own.Next(); err != nil || string(ev.Data) != want {
			t.Errorf("a NewReader reader after Release: %q, %v; want %q", ev.Data, err, want)
		}
	}
}
