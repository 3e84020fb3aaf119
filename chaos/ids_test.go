//go:build unix

package chaos

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// idView lists, for the requests of method, what was received and forwarded
// which way under which id, and the fault decisions with the id they gave.
func idView(events []wire.Event, method string) []string {
	var out []string
	want := map[int64]bool{}
	for _, e := range events {
		switch {
		case e.Type == wire.EventReceived && e.Method == method:
			want[e.Seq] = true
			out = append(out, "received "+e.Dir+" "+e.ID)
		case e.Type == wire.EventFault:
			out = append(out, strings.TrimSpace("fault "+e.Fault+" "+e.ID))
		case e.Type == wire.EventForwarded && want[e.Of]:
			out = append(out, "forwarded "+e.Dir+" "+orUnchanged(e.ID))
		}
	}
	return out
}

func orUnchanged(id string) string {
	if id == "" {
		return "unchanged"
	}
	return id
}

// answersTo lists the answers the server wrote to the ids it got, and how
// each was forwarded: "received ID -> forwarded ID".
func answersTo(events []wire.Event, ids ...string) []string {
	asked := map[string]bool{}
	for _, id := range ids {
		asked[id] = true
	}
	recv := map[int64]string{}
	var out []string
	for _, e := range events {
		switch {
		case e.Type == wire.EventReceived && e.Dir == "s2c" && (e.Kind == "response" || e.Kind == "error") && asked[e.ID]:
			recv[e.Seq] = e.ID
		case e.Type == wire.EventForwarded && e.Dir == "s2c" && recv[e.Of] != "":
			to := e.ID
			if to == "" {
				to = recv[e.Of]
			}
			out = append(out, recv[e.Of]+" -> "+to)
		}
	}
	return out
}

func resultText(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if r == nil || len(r.Content) != 1 {
		t.Fatalf("result %+v; want one content item", r)
	}
	tc, ok := r.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("content %+v is not text", r.Content[0])
	}
	return tc.Text
}

// id-type against mcp-go: its server answers the string id it got with that
// string, the relay gives the answer back the client's number, and the
// mcp-go client gets its result. The judge finds nothing.
func TestIDTypeWithRealMCPServer(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startMCP(t, "id-type")
	s.initialize(t)
	res, err := s.call(t.Context(), "echo", map[string]any{"text": "typed"}, "")
	if err != nil {
		t.Fatalf("echo through id-type: %v", err)
	}
	if got := resultText(t, res); got != "typed" {
		t.Errorf("echo returned %q, want typed", got)
	}
	s.end(t)
	events := s.Rec.Events()
	var id string
	for _, e := range eventsOf(events, wire.EventReceived) {
		if e.Method == "tools/call" {
			id = e.ID
		}
	}
	want := []string{"received c2s " + id, "fault id-type#1 \"" + id + "\"", "forwarded c2s \"" + id + "\""}
	if diff := cmp.Diff(want, idView(events, "tools/call")); diff != "" {
		t.Errorf("the call (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`"` + id + `" -> ` + id}, answersTo(events, `"`+id+`"`, id)); diff != "" {
		t.Errorf("the server's answers (-want +got):\n%s", diff)
	}
	checkVerdict(t, judge.Session(events))
}

// id-collision against mcp-go: a slow call is in flight when an echo call
// arrives; the echo goes on under the slow call's id. mcp-go's server runs
// tool calls concurrently and answers both under that id, the echo first:
// by the fault's rule the first answer goes to the request in flight first,
// so the mcp-go client gets the results crossed, the slow call the echo's
// text and the echo call the slow call's. The server owed and wrote two
// answers, so the judge finds nothing.
func TestIDCollisionWithRealMCPServer(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startMCP(t, "id-collision")
	s.initialize(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	slow := make(chan outcome, 1)
	go func() {
		r, err := s.call(ctx, "slow", map[string]any{"ms": 500, "steps": 1}, "")
		slow <- outcome{r, err}
	}()
	// The echo must reach the relay while the slow call is in flight.
	if !eventually(5*time.Second, func() bool { return len(calls(s.Rec.Events())) == 1 }) {
		t.Fatal("the slow call never reached the relay")
	}
	echo, err := s.call(ctx, "echo", map[string]any{"text": "crossed"}, "")
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	sl := <-slow
	if sl.err != nil {
		t.Fatalf("slow: %v", sl.err)
	}
	if got := resultText(t, sl.res); got != "crossed" {
		t.Errorf("the slow call got %q; want the echo's text, crossed (the first answer under the shared id)", got)
	}
	if got := resultText(t, echo); got == "crossed" || !strings.Contains(got, "500") {
		t.Errorf("the echo call got %q; want the slow call's result", got)
	}
	s.end(t)
	events := s.Rec.Events()
	ids := calls(events)
	if len(ids) != 2 {
		t.Fatalf("tools/call ids %v; want two", ids)
	}
	want := []string{
		// The first call has nothing to collide with: the fault skips it.
		"received c2s " + ids[0], "fault id-collision#1", "forwarded c2s unchanged",
		"received c2s " + ids[1], "fault id-collision#1 " + ids[0], "forwarded c2s " + ids[0],
	}
	if diff := cmp.Diff(want, idView(events, "tools/call")); diff != "" {
		t.Errorf("the calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ids[0] + " -> " + ids[0], ids[0] + " -> " + ids[1]}, answersTo(events, ids[0])); diff != "" {
		t.Errorf("the server's answers (-want +got):\n%s", diff)
	}
	checkVerdict(t, judge.Session(events))
}

// calls lists the ids of the tools/call requests the client sent.
func calls(events []wire.Event) []string {
	var ids []string
	for _, e := range events {
		if e.Type == wire.EventReceived && e.Method == "tools/call" {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// eventually reports whether cond came true within d.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// id-type and a cancellation: the mcp-go client gives up on a slow call and
// cancels it by the id it gave it; the relay translates the requestId to the
// string the server holds the call under, so the mcp-go server stops the
// call at once. mcp-go then answers the cancelled call with an error
// ("context canceled", which the spec allows), translated back; had the
// cancellation named an id the server does not know, the call would have
// run its 3s and answered with a result. The judge finds nothing.
func TestIDTypeTranslatesCancellationsForRealMCPServer(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startMCP(t, "id-type")
	s.initialize(t)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := s.call(ctx, "slow", map[string]any{"ms": 3000, "steps": 30}, ""); err == nil {
		t.Fatal("the slow call returned before its context ended")
	}
	var cancelled, answer *wire.Event
	if !eventually(2*time.Second, func() bool {
		events := s.Rec.Events()
		for i, e := range events {
			switch {
			case e.Type == wire.EventForwarded && e.Method == "notifications/cancelled":
				cancelled = &events[i]
			case e.Type == wire.EventReceived && e.Dir == "s2c" && e.Kind == "error" && cancelled != nil:
				answer = &events[i]
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no error answer within 2s of the cancellation (%+v)", cancelled)
	}
	id := calls(s.Rec.Events())[0]
	if want := `"requestId":"` + id + `"`; !strings.Contains(cancelled.Raw, want) {
		t.Errorf("the server got the cancellation %s; want it to name %s", cancelled.Raw, want)
	}
	if want := `{"jsonrpc":"2.0","id":"` + id + `","error":{"code":-32603,"message":"context canceled"}}` + "\n"; answer.Raw != want {
		t.Errorf("the server answered %q; want %q", answer.Raw, want)
	}
	s.end(t)
	events := s.Rec.Events()
	if diff := cmp.Diff([]string{`"` + id + `" -> ` + id}, answersTo(events, `"`+id+`"`, id)); diff != "" {
		t.Errorf("the server's answers (-want +got):\n%s", diff)
	}
	checkVerdict(t, judge.Session(events))
}
