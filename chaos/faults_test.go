//go:build unix

package chaos

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpchaos/mcpchaos/wire"
)

// mcpSession is a real mcp-go client talking to a real mcp-go stdio server
// through the relay.
type mcpSession struct {
	*relay
	client *client.Client

	mu    sync.Mutex
	notes []mcp.JSONRPCNotification
}

func startMCP(t *testing.T, specs ...string) *mcpSession {
	t.Helper()
	return startMCPWith(t, Config{}, specs...)
}

func (s *mcpSession) initialize(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "chaos-test", Version: "1"}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := s.client.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
}

func (s *mcpSession) call(ctx context.Context, name string, args map[string]any, token string) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	if token != "" {
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	return s.client.CallTool(ctx, req)
}

func (s *mcpSession) notifications(method string) []mcp.JSONRPCNotification {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, n := range s.notes {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// end closes the client and waits for the session to finish.
func (s *mcpSession) end(t *testing.T) *Result {
	t.Helper()
	s.client.Close()
	return s.wait(t, 15*time.Second)
}

// faultEvents lists "label: detail" for each fault decision.
func faultEvents(events []wire.Event) []string {
	var out []string
	for _, e := range eventsOf(events, wire.EventFault) {
		out = append(out, e.Fault+": "+e.Detail)
	}
	return out
}

func TestNoFaultSessionWithRealMCPServer(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startMCP(t)
	s.initialize(t)
	res, err := s.call(t.Context(), "echo", map[string]any{"text": "hi"}, "")
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	got := s.end(t)
	if got.ExitCode == nil || *got.ExitCode != 0 {
		t.Errorf("server ended %+v, want exit 0 after stdin closed", got)
	}
	if n := len(eventsOf(s.Rec.Events(), wire.EventDropped)); n != 0 {
		t.Errorf("%d frames dropped with no fault", n)
	}
}

// burst: progress notifications injected just before the tool's response
// reach the client ahead of it, for the call's own progress token.
func TestBurstInjectsProgressBeforeTheResponse(t *testing.T) {
	s := startMCP(t, "burst:on=s2c:response:tools/call,count=7")
	s.initialize(t)
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "x"}, "tok-1"); err != nil {
		t.Fatal(err)
	}
	progress := s.notifications("notifications/progress")
	if len(progress) != 7 {
		t.Fatalf("client saw %d progress notifications, want the 7 injected", len(progress))
	}
	for i, n := range progress {
		if tok := n.Params.AdditionalFields["progressToken"]; tok != "tok-1" {
			t.Errorf("notification %d has token %v, want tok-1", i, tok)
		}
	}
	s.end(t)
	events := s.Rec.Events()
	if diff := cmp.Diff([]string{`burst#1: inject 7 notifications/progress toward the client for progress token "tok-1"`}, faultEvents(events)); diff != "" {
		t.Errorf("fault decisions (-want +got):\n%s", diff)
	}
	// The injected frames come before the response is forwarded.
	var order []string
	for _, e := range events {
		if e.Type == wire.EventInjected || (e.Type == wire.EventForwarded && e.Dir == "s2c") {
			order = append(order, e.Type)
		}
	}
	want := []string{"forwarded", "forwarded"} // initialize and tools/call responses
	want = append(want[:1], append(strings.Fields(strings.Repeat("injected ", 7)), want[1:]...)...)
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("s2c order (-want +got):\n%s", diff)
	}
}

func TestBurstInjectsListChangedMidCall(t *testing.T) {
	s := startMCP(t, "burst:on=c2s:request:tools/call,dir=s2c,method=notifications/tools/list_changed,count=3")
	s.initialize(t)
	if _, err := s.call(t.Context(), "slow", map[string]any{"ms": 100, "steps": 1}, ""); err != nil {
		t.Fatal(err)
	}
	if n := len(s.notifications("notifications/tools/list_changed")); n != 3 {
		t.Errorf("client saw %d list_changed, want 3", n)
	}
	s.end(t)
}

// eof: the server's stdin closes right after a tools/call is forwarded while
// it is in flight; the client's call fails instead of being answered, and the
// server is shut down by the ladder.
func TestEOFClosesServerStdinWithARequestInFlight(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startMCP(t, "eof:on=c2s:request:tools/call,inflight=1")
	s.initialize(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := s.call(ctx, "slow", map[string]any{"ms": 2000, "steps": 2}, "")
	if err == nil {
		t.Log("the server answered the call after its stdin closed")
	}
	res := s.wait(t, 15*time.Second)
	// The tools/call is forwarded, then the fault fires on it and closes
	// the server's stdin, in that order.
	events := s.Rec.Events()
	var call int64
	for _, e := range eventsOf(events, wire.EventReceived) {
		if e.Method == "tools/call" {
			call = e.Seq
		}
	}
	var got []string
	for _, e := range events {
		switch {
		case e.Of == call && e.Type != wire.EventReceived:
			got = append(got, e.Type+" "+e.Dir+e.Fault)
		case e.Type == wire.EventPipeClosed && e.Pipe == wire.PipeServerInput:
			got = append(got, "closed server-stdin: "+e.Detail)
		}
	}
	want := []string{
		"forwarded c2s",
		"fault eof#1",
		"closed server-stdin: early EOF from fault eof#1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events of the tools/call (-want +got):\n%s", diff)
	}
	if res.Signal != "" {
		t.Logf("the server needed %s after early EOF", res.Signal)
	}
}

// stall: holding the server's first response for a while delays it by that
// much, and nothing is lost.
func TestStallDelaysADirection(t *testing.T) {
	s := startMCP(t, "stall:on=s2c:response,for=400ms")
	start := time.Now()
	s.initialize(t)
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("initialize took %s through a 400ms stall", took)
	}
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "after"}, ""); err != nil {
		t.Fatal(err)
	}
	s.end(t)
	if n := len(eventsOf(s.Rec.Events(), wire.EventDropped)); n != 0 {
		t.Errorf("%d frames dropped by a stall that lifted", n)
	}
}

// stall for ever with a shrunk pipe: the server's large answer blocks its
// write; the client's call times out; the held frames are recorded as dropped
// when the session ends, and the ladder still ends the server.
func TestStallForeverBlocksTheWriter(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startMCP(t, "stall:on=c2s:request:tools/call,dir=s2c,shrink=true")
	s.initialize(t)
	ctx, cancel := context.WithTimeout(t.Context(), 700*time.Millisecond)
	defer cancel()
	if _, err := s.call(ctx, "big", map[string]any{"kib": 512}, ""); err == nil {
		t.Fatal("the call was answered through a stall that never lifts")
	}
	res := s.end(t)
	if res.Signal == "" {
		t.Logf("server exited with %v after its stdin closed", *res.ExitCode)
	}
	events := s.Rec.Events()
	var shrunk bool
	for _, e := range eventsOf(events, wire.EventFault) {
		if e.Pipe == wire.PipeServerOutput && strings.HasPrefix(e.Detail, "pipe shrunk to") {
			shrunk = true
		}
	}
	if !shrunk {
		t.Errorf("no record of the pipe being shrunk in %v", faultEvents(events))
	}
	for _, e := range eventsOf(events, wire.EventForwarded) {
		if e.Dir == "s2c" && e.Seq > firstFault(events) {
			t.Errorf("frame %d forwarded s2c during a stall", e.Of)
		}
	}
	if len(eventsOf(events, wire.EventDropped)) == 0 {
		t.Error("the frame held by the stall was not recorded as dropped")
	}
}

func firstFault(events []wire.Event) int64 {
	for _, e := range events {
		if e.Type == wire.EventFault {
			return e.Seq
		}
	}
	return 0
}

// half-close: closing our read end of the server's stdout makes its next
// write fail; an mcp-go server writing to fd 1 dies of SIGPIPE, which was not
// our signal.
func TestHalfCloseMakesTheServerWriteFail(t *testing.T) {
	s := startMCP(t, "half-close:dir=s2c,on=c2s:request:tools/call")
	s.initialize(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	// A slow tool writes its answer well after our read end closed, so the
	// write fails for certain; an instant echo could slip into the pipe first.
	if _, err := s.call(ctx, "slow", map[string]any{"ms": 300, "steps": 1}, ""); err == nil {
		t.Error("the call was answered through a closed pipe")
	}
	res := s.wait(t, 15*time.Second)
	if res.Signal != "SIGPIPE" || res.SignalledByUs {
		t.Errorf("server ended %+v, want killed by SIGPIPE from its own write", res)
	}
	closed := false
	for _, e := range eventsOf(s.Rec.Events(), wire.EventPipeClosed) {
		if e.Pipe == wire.PipeServerOutput && e.ByUs {
			closed = true
		}
	}
	if !closed {
		t.Error("no record of our closing server-stdout")
	}
}

// eventsAbout lists "type dir fault detail" for the events that refer to the
// received frame seq.
func eventsAbout(events []wire.Event, seq int64) []string {
	var out []string
	for _, e := range events {
		if e.Of == seq && e.Type != wire.EventFault {
			out = append(out, strings.Join(strings.Fields(strings.Join([]string{e.Type, e.Dir, e.Fault, e.Detail}, " ")), " "))
		}
	}
	return out
}

// receivedResponse returns the seq of the n-th (1-based) response the server sent.
func receivedResponse(t *testing.T, events []wire.Event, n int) int64 {
	t.Helper()
	for _, e := range eventsOf(events, wire.EventReceived) {
		if e.Dir == "s2c" && e.Kind == "response" {
			if n--; n == 0 {
				return e.Seq
			}
		}
	}
	t.Fatalf("no response %d from the server in the transcript", n)
	return 0
}

// delay: the server's first response is held for the delay, and nothing is lost.
func TestDelayHoldsAMessage(t *testing.T) {
	s := startMCP(t, "delay:on=s2c:response,for=400ms")
	start := time.Now()
	s.initialize(t)
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("initialize took %s through a 400ms delay", took)
	}
	start = time.Now()
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "after"}, ""); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= 400*time.Millisecond {
		t.Errorf("the second response took %s; the delay fires once", took)
	}
	s.end(t)
	events := s.Rec.Events()
	if diff := cmp.Diff([]string{"delay#1: hold the message for 400ms"}, faultEvents(events)); diff != "" {
		t.Errorf("fault decisions (-want +got):\n%s", diff)
	}
	if n := len(eventsOf(events, wire.EventDropped)); n != 0 {
		t.Errorf("%d frames dropped by a delay", n)
	}
}

// drop: the tool's response never reaches the client, whose call times out;
// the transcript says it was dropped and by which fault.
func TestDropLosesAResponse(t *testing.T) {
	s := startMCP(t, "drop:on=s2c:response:tools/call")
	s.initialize(t)
	ctx, cancel := context.WithTimeout(t.Context(), 700*time.Millisecond)
	defer cancel()
	if _, err := s.call(ctx, "echo", map[string]any{"text": "lost"}, ""); err == nil {
		t.Fatal("the call was answered although its response was dropped")
	}
	s.end(t)
	events := s.Rec.Events()
	want := []string{"dropped s2c dropped by fault drop#1"}
	if diff := cmp.Diff(want, eventsAbout(events, receivedResponse(t, events, 2))); diff != "" {
		t.Errorf("events of the tools/call response (-want +got):\n%s", diff)
	}
}

// duplicate: the tool's response reaches the client twice; the client takes
// the first, and the transcript shows two forwarded copies.
func TestDuplicateForwardsTwice(t *testing.T) {
	s := startMCP(t, "duplicate:on=s2c:response:tools/call")
	s.initialize(t)
	res, err := s.call(t.Context(), "echo", map[string]any{"text": "twice"}, "")
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	// The client still works after the stray second answer.
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "again"}, ""); err != nil {
		t.Fatal(err)
	}
	s.end(t)
	events := s.Rec.Events()
	want := []string{"forwarded s2c", "forwarded s2c"}
	if diff := cmp.Diff(want, eventsAbout(events, receivedResponse(t, events, 2))); diff != "" {
		t.Errorf("events of the tools/call response (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:1], eventsAbout(events, receivedResponse(t, events, 3))); diff != "" {
		t.Errorf("events of the second tools/call response (-want +got):\n%s", diff)
	}
}

// corrupt mode=text: the tool's response is replaced by a non-JSON line; the
// client's call fails, and the transcript shows the original dropped and the
// replacement injected in its place.
func TestCorruptReplacesAResponse(t *testing.T) {
	s := startMCP(t, "corrupt:on=s2c:response:tools/call,mode=text")
	s.initialize(t)
	ctx, cancel := context.WithTimeout(t.Context(), 700*time.Millisecond)
	defer cancel()
	if _, err := s.call(ctx, "echo", map[string]any{"text": "garbled"}, ""); err == nil {
		t.Fatal("the call was answered although its response was corrupted")
	}
	s.end(t)
	events := s.Rec.Events()
	seq := receivedResponse(t, events, 2)
	want := []string{"dropped s2c replaced by fault corrupt#1", "injected s2c corrupt#1"}
	if diff := cmp.Diff(want, eventsAbout(events, seq)); diff != "" {
		t.Errorf("events of the tools/call response (-want +got):\n%s", diff)
	}
	for _, e := range eventsOf(events, wire.EventInjected) {
		if e.Of == seq && (e.Raw != "mcpchaos: not json\n" || e.Kind != "invalid") {
			t.Errorf("injected frame %+v; want the invalid line mcpchaos: not json", e)
		}
	}
	for _, e := range eventsOf(events, wire.EventForwarded) {
		if e.Of == seq {
			t.Errorf("the corrupted response was also forwarded: %+v", e)
		}
	}
}

// An eof closes the server's stdin once the frames already queued toward
// it have reached it. The pump flushes before its next read, and before
// faults that fire after forwarding in the same direction; an eof fired
// before a frame (or by a frame going the other way) closed the pipe with
// earlier frames still queued: they were recorded as forwarded and never
// arrived. Two calls in one write (one read for the pump), the eof just
// before the second, and the server copying its stdin to a file show it.
func TestEOFDeliversWhatWasForwardedBeforeIt(t *testing.T) {
	got := filepath.Join(t.TempDir(), "stdin")
	r := startRelay(t, Config{Command: []string{"sh", "-c", `cat > "$0"`, got}, Plan: mustPlan(t, 1, "eof:on=c2s:request:tools/call,nth=2,position=before")})
	first := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}` + "\n"
	second := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}` + "\n"
	if _, err := io.WriteString(r.In, first+second); err != nil {
		t.Fatal(err)
	}
	r.wait(t, 15*time.Second)
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != first {
		t.Errorf("the server read %q before its stdin closed; want the first call", b)
	}
}
