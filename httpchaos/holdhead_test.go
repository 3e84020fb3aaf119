package httpchaos_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpchaos/mcpchaos/wire"
)

// hold-headers for a while: the call still succeeds, late, and the judge
// finds nothing.
func TestHoldHeadersDelaysTheHead(t *testing.T) {
	r := startRig(t, 1, "hold-headers:on=c2s:request:tools/call,for=400ms")
	c := r.dial(t, mcp.ProtocolVersion20251125)
	start := time.Now()
	if _, err := call(c, 5*time.Second, "echo", map[string]any{"text": "hi"}, nil); err != nil {
		t.Fatalf("the call through a held head failed: %v", err)
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("the call took %v; the head was held for 400ms", took)
	}
	c.Close()
	v := r.end(t)
	held := httpEvents(r.rec.Events(), func(e wire.Event) bool { return e.Fault == "hold-headers#1" })
	if len(held) != 1 || held[0].Detail != "the response head goes to the client, held by fault hold-headers#1" {
		t.Errorf("want the head's release recorded once; got %+v", held)
	}
	if len(v.Findings) != 0 {
		t.Errorf("findings on a well-behaved server: %+v", v.Findings)
	}
}

// hold-headers for ever: the client's own deadline ends the call, and the
// server's answer, which the client never saw, is still in the record, so
// the judge does not blame the server for a call it did answer.
func TestHoldHeadersForeverKeepsTheServersAnswer(t *testing.T) {
	r := startRig(t, 1, "hold-headers:on=c2s:request:tools/call")
	c := r.dial(t, mcp.ProtocolVersion20251125)
	if _, err := call(c, 500*time.Millisecond, "echo", map[string]any{"text": "hi"}, nil); err == nil {
		t.Fatal("the call succeeded with its head held for ever")
	}
	r.waitFor(t, func(e wire.Event) bool {
		return e.Type == wire.EventDropped && strings.Contains(e.Detail, "held by fault hold-headers#1")
	})
	c.Close()
	v := r.end(t)
	var answered bool
	for _, e := range r.rec.Events() {
		if e.Type == wire.EventReceived && e.Dir == "s2c" && e.Kind == "response" {
			answered = true
		}
	}
	if !answered {
		t.Error("the server's answer to the held call is not in the record")
	}
	if len(v.Findings) != 0 {
		t.Errorf("findings on a well-behaved server: %+v", v.Findings)
	}
}

// event-id-reuse sends the result with the id of the progress event before
// it; the first event with an id has none to reuse and goes unchanged.
func TestEventIDReuse(t *testing.T) {
	stream := "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n" +
		"id: 8\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	front, p, rec := proxyTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
	}), "/mcp", "event-id-reuse:on=s2c,times=0")
	resp, err := http.Post(front, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p.Close("the test ended")
	want := "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n" +
		"id: 7\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("the stream the client read (-want +got):\n%s", diff)
	}
	var notes []string
	for _, e := range rec.Events() {
		if e.Type == wire.EventForwarded && e.Detail != "" || e.Type == wire.EventHTTP && e.Fault != "" {
			notes = append(notes, e.Detail)
		}
	}
	wantNotes := []string{
		"event id not reused by fault event-id-reuse#1: no event before it in this stream carried an id",
		"sent with event id 7 (the one before it) instead of 8 by fault event-id-reuse#1",
	}
	if diff := cmp.Diff(wantNotes, notes); diff != "" {
		t.Errorf("recorded notes (-want +got):\n%s", diff)
	}
}
