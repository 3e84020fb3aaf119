package httpchaos

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The framer keeps each event's bytes as they came, whatever the line
// endings, and reads its fields as EventSource does.
func TestEventReader(t *testing.T) {
	type got struct {
		Raw, ID, Name, Data string
		HasData, Message    bool
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
		{"legacy endpoint", "event: endpoint\ndata: /messages?sessionId=x\n\n", []got{
			{Raw: "event: endpoint\ndata: /messages?sessionId=x\n\n", Name: "endpoint", Data: "/messages?sessionId=x", HasData: true}}, io.EOF},
		{"unfinished at the end", "data: {\"a\"", []got{{Raw: "data: {\"a\""}}, io.EOF},
		{"over the cap", "data: " + strings.Repeat("x", 100) + "\n\n", []got{{Raw: "data: " + strings.Repeat("x", 100) + "\n"}}, errEventTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newEventReader(strings.NewReader(tc.in), 64)
			var evs []got
			var err error
			for {
				var e event
				e, err = r.next()
				if len(e.raw) > 0 {
					evs = append(evs, got{string(e.raw), e.id, e.name, string(e.data), e.hasData, e.isMessage() && err == nil})
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
