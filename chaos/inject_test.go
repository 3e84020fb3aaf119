//go:build unix

package chaos

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The injection faults against real mcp-go peers: the bundled stdio server
// and an mcp-go client that serves roots, sampling and elicitation, each in
// the protocol era its test names. The judge's verdict on the transcript is
// asserted for the peer the fault is aimed at.

// askedClient is an mcp-go client that answers the server's requests and
// counts them by method.
type askedClient struct {
	mu    sync.Mutex
	asked map[string]int
	notes []string
}

func (a *askedClient) ask(method string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked[method]++
}

func (a *askedClient) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	a.ask("roots/list")
	return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///tmp", Name: "tmp"}}}, nil
}

func (a *askedClient) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	a.ask("sampling/createMessage")
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("ok")},
		Model:           "none",
	}, nil
}

func (a *askedClient) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.ask("elicitation/create")
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
}

type injectSession struct {
	*relay
	client *client.Client
	peer   *askedClient
}

// startInject runs a real mcp-go client (speaking protocol, "" for the
// client's default, the stateless era) and the real mcp-go server through
// the relay with the given faults, judged in role.
func startInject(t *testing.T, protocol, role string, specs ...string) *injectSession {
	t.Helper()
	r := startRelay(t, Config{Command: helperCommand(t, "mcp-server"), Plan: mustPlan(t, 42, specs...), Role: role, Deadline: 5 * time.Second})
	a := &askedClient{asked: map[string]int{}}
	opts := []client.ClientOption{client.WithRootsHandler(a), client.WithSamplingHandler(a), client.WithElicitationHandler(a)}
	if protocol != "" {
		opts = append(opts, client.WithProtocolVersion(protocol))
	}
	s := &injectSession{relay: r, peer: a, client: client.NewClient(transport.NewIO(r.Out, r.In, io.NopCloser(strings.NewReader(""))), opts...)}
	s.client.OnNotification(func(n mcp.JSONRPCNotification) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.notes = append(a.notes, n.Method)
	})
	// The transport answers the server's requests with Start's context:
	// it must outlive this function.
	if err := s.client.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.client.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "chaos-inject-test", Version: "1"}
	if _, err := s.client.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return s
}

func (s *injectSession) call(t *testing.T, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.client.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// end closes the client, waits for the session and returns the judge's
// verdict on it.
func (s *injectSession) end(t *testing.T) judge.Verdict {
	t.Helper()
	s.client.Close()
	s.wait(t, 15*time.Second)
	return judge.Session(s.Rec.Events())
}

// swallowedAnswers lists "dir kind id: reason" for each answer to an
// injected request the relay received and dropped, or says it forwarded one.
func swallowedAnswers(events []wire.Event) []string {
	bySeq := map[int64]wire.Event{}
	var out []string
	for _, e := range events {
		switch {
		case e.Type == wire.EventReceived:
			bySeq[e.Seq] = e
		case e.Type == wire.EventDropped && strings.HasPrefix(bySeq[e.Of].ID, wire.InjectIDPrefix):
			r := bySeq[e.Of]
			out = append(out, r.Dir+" "+r.Kind+" "+r.ID+": "+e.Detail)
		case e.Type == wire.EventForwarded && strings.HasPrefix(bySeq[e.Of].ID, wire.InjectIDPrefix):
			r := bySeq[e.Of]
			out = append(out, r.Dir+" "+r.Kind+" "+r.ID+": forwarded to a peer that never asked")
		}
	}
	return out
}

// injectedFrames lists "dir kind method id" of each frame a fault injected.
func injectedFrames(events []wire.Event) []string {
	var out []string
	for _, e := range eventsOf(events, wire.EventInjected) {
		out = append(out, strings.TrimSpace(e.Dir+" "+e.Kind+" "+e.Method+" "+e.ID))
	}
	return out
}

// noClientProgram is the one note of a client-role verdict here: the test
// itself is the client, so there is no client program whose exit to judge.
const noClientProgram = "the transcript records nothing about the client program (no event with peer client): whether it exited was not judged"

// checkVerdict wants no findings and, in the client role, only the note
// that there is no client program.
func checkVerdict(t *testing.T, v judge.Verdict, notes ...string) {
	t.Helper()
	if len(v.Findings) != 0 || !cmp.Equal(notes, v.Indeterminate, cmpopts.EquateEmpty()) {
		b, _ := json.MarshalIndent(v, "", "  ")
		t.Errorf("verdict %s; want no findings and indeterminate %q", b, notes)
	}
}

// server-request: each request reaches the real client mid-call, the client
// answers it, the relay swallows the answer (the server never sees an answer
// to a request it did not send), the call still completes, and the judge of
// the client finds nothing.
func TestServerRequestToTheRealClient(t *testing.T) {
	for _, method := range []string{"roots/list", "sampling/createMessage", "elicitation/create", "ping"} {
		t.Run(method, func(t *testing.T) {
			s := startInject(t, mcp.ProtocolVersion20251125, "client", "server-request:method="+method)
			if res := s.call(t, "slow", map[string]any{"ms": 300, "steps": 1}); res.IsError {
				t.Fatalf("slow: %+v", res)
			}
			v := s.end(t)
			events := s.Rec.Events()
			if diff := cmp.Diff([]string{"s2c request " + method + ` "mcpchaos-inject-1"`}, injectedFrames(events)); diff != "" {
				t.Errorf("injected (-want +got):\n%s", diff)
			}
			want := []string{`c2s response "mcpchaos-inject-1": the answer to a request injected by fault server-request#1`}
			if diff := cmp.Diff(want, swallowedAnswers(events)); diff != "" {
				t.Errorf("swallowed answers (-want +got):\n%s", diff)
			}
			if method != "ping" { // mcp-go answers ping itself
				s.peer.mu.Lock()
				n := s.peer.asked[method]
				s.peer.mu.Unlock()
				if n != 1 {
					t.Errorf("the client's handler was asked %d times, want once", n)
				}
			}
			checkVerdict(t, v, noClientProgram)
		})
	}
}

// server-request in the stateless era, which has no server-to-client
// requests: skipped, nothing injected.
func TestServerRequestSkippedInTheStatelessEra(t *testing.T) {
	s := startInject(t, "", "client", "server-request", "early-request:on=c2s:request:tools/call")
	s.call(t, "echo", map[string]any{"text": "hi"})
	v := s.end(t)
	events := s.Rec.Events()
	want := []string{
		"server-request#1: skipped: the client speaks the stateless 2026-07-28 protocol, which has no server-to-client requests",
		"early-request#1: skipped: the client speaks the stateless 2026-07-28 protocol, which has no initialize handshake to come before",
	}
	got := faultEvents(events)
	if diff := cmp.Diff(want, got, cmp.Transformer("sorted", sortedCopy)); diff != "" {
		t.Errorf("fault decisions (-want +got):\n%s", diff)
	}
	if n := len(eventsOf(events, wire.EventInjected)); n != 0 {
		t.Errorf("%d frames injected, want none", n)
	}
	// Nothing was tested, and the verdict says why rather than calling the
	// client sound.
	checkVerdict(t, v,
		"no fault fired: early-request#1 skipped: the client speaks the stateless 2026-07-28 protocol, which has no initialize handshake to come before",
		noClientProgram)
}

func sortedCopy(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// list-changed: all three notifications reach the real client mid-call; the
// call completes and the judge of the client finds nothing.
func TestListChangedToTheRealClient(t *testing.T) {
	s := startInject(t, mcp.ProtocolVersion20251125, "client", "list-changed:list=all")
	if res := s.call(t, "slow", map[string]any{"ms": 200, "steps": 1}); res.IsError {
		t.Fatalf("slow: %+v", res)
	}
	v := s.end(t)
	s.peer.mu.Lock()
	var got []string
	for _, n := range s.peer.notes {
		if strings.HasSuffix(n, "/list_changed") {
			got = append(got, n)
		}
	}
	s.peer.mu.Unlock()
	want := []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("list_changed the client saw (-want +got):\n%s", diff)
	}
	checkVerdict(t, v, noClientProgram)
}

// early-request: the real server gets tools/list before notifications/
// initialized and answers it; the answer is swallowed, the client's session
// goes on, and the judge of the server finds nothing.
func TestEarlyRequestToTheRealServer(t *testing.T) {
	for _, tc := range []struct{ method, answer string }{
		{"tools/list", "response"},
		{"prompts/list", "response"},
		{"no/such-method", "error"},
	} {
		method := tc.method
		t.Run(method, func(t *testing.T) {
			s := startInject(t, mcp.ProtocolVersion20251125, "server", "early-request:method="+method)
			s.call(t, "echo", map[string]any{"text": "after"})
			v := s.end(t)
			events := s.Rec.Events()
			if diff := cmp.Diff([]string{"c2s request " + method + ` "mcpchaos-inject-1"`}, injectedFrames(events)); diff != "" {
				t.Errorf("injected (-want +got):\n%s", diff)
			}
			// The injection comes before initialized is forwarded.
			var order []string
			for _, e := range events {
				if e.Type == wire.EventInjected || e.Type == wire.EventForwarded && e.Dir == "c2s" && isInitialized(events, e.Of) {
					order = append(order, e.Type)
				}
			}
			if diff := cmp.Diff([]string{"injected", "forwarded"}, order); diff != "" {
				t.Errorf("order of the injection and initialized (-want +got):\n%s", diff)
			}
			want := []string{`s2c ` + tc.answer + ` "mcpchaos-inject-1": the answer to a request injected by fault early-request#1`}
			if diff := cmp.Diff(want, swallowedAnswers(events)); diff != "" {
				t.Errorf("swallowed answers (-want +got):\n%s", diff)
			}
			checkVerdict(t, v)
		})
	}
}

func isInitialized(events []wire.Event, seq int64) bool {
	for _, e := range events {
		if e.Seq == seq {
			return e.Method == "notifications/initialized"
		}
	}
	return false
}

// cancel, fired as the call reaches the server (the default trigger):
// whether mcp-go has registered the call by the time the cancellation
// arrives is a race it may lose, so the call may run to its end; either way
// the server answers or stays silent as the spec allows, takes the next
// call, and the judge of the server finds nothing to hold against it.
func TestCancelMidCallOnTheRealServer(t *testing.T) {
	s := startInject(t, mcp.ProtocolVersion20251125, "server", "cancel")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "slow"
	req.Params.Arguments = map[string]any{"ms": 300, "steps": 1}
	s.client.CallTool(ctx, req) // its outcome is the race's
	s.call(t, "echo", map[string]any{"text": "still here"})
	v := s.end(t)
	events := s.Rec.Events()
	if diff := cmp.Diff([]string{"c2s notification notifications/cancelled"}, injectedFrames(events)); diff != "" {
		t.Errorf("injected (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cancel#1: cancel tools/call (id 2) toward the server"}, faultEvents(events)); diff != "" {
		t.Errorf("fault decisions (-want +got):\n%s", diff)
	}
	checkVerdict(t, v)
}

// cancel, fired on the call's first progress notification with
// target=oldest: the server is running the tool then, so mcp-go stops it and
// still answers the cancelled call (allowed), long before the tool's 3 s.
func TestCancelOnProgressStopsTheRealServersTool(t *testing.T) {
	s := startInject(t, mcp.ProtocolVersion20251125, "server", "cancel:on=s2c:notification:notifications/progress,target=oldest")
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "slow"
	req.Params.Arguments = map[string]any{"ms": 3000, "steps": 30}
	req.Params.Meta = &mcp.Meta{ProgressToken: "p"}
	if res, err := s.client.CallTool(ctx, req); err == nil && !res.IsError {
		t.Errorf("the cancelled slow call succeeded: %+v", res)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("the cancelled call took %v; the server did not stop the tool", d)
	}
	s.call(t, "echo", map[string]any{"text": "still here"})
	v := s.end(t)
	if diff := cmp.Diff([]string{"cancel#1: cancel tools/call (id 2) toward the server"}, faultEvents(s.Rec.Events())); diff != "" {
		t.Errorf("fault decisions (-want +got):\n%s", diff)
	}
	checkVerdict(t, v)
}

// cancel just before the response is forwarded: the cancellation reaches
// the server after it answered, the answer still reaches the client, and
// the server takes the late cancellation in its stride.
func TestCancelJustBeforeTheResponseOnTheRealServer(t *testing.T) {
	s := startInject(t, mcp.ProtocolVersion20251125, "server", "cancel:on=s2c:response:tools/call,position=before")
	res := s.call(t, "echo", map[string]any{"text": "raced"})
	if res.IsError || len(res.Content) == 0 || !strings.Contains(mcp.GetTextFromContent(res.Content[0]), "raced") {
		t.Errorf("echo: %+v, want its normal answer", res)
	}
	s.call(t, "echo", map[string]any{"text": "still here"})
	v := s.end(t)
	events := s.Rec.Events()
	want := []string{"cancel#1: cancel tools/call (id 2) toward the server"}
	if diff := cmp.Diff(want, faultEvents(events)); diff != "" {
		t.Errorf("fault decisions (-want +got):\n%s", diff)
	}
	checkVerdict(t, v)
}
