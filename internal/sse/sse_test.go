package sse_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
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
// id, data, blank line.
func BenchmarkReader(b *testing.B) {
	var stream strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&stream, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":%d}}\n\n", i, i)
	}
	s := stream.String()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		r := sse.NewReader(strings.NewReader(s), 1<<20)
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}
