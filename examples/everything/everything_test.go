package everything_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpchaos/mcpchaos/examples/everything"
)

// testTimeout bounds every wait in these tests.
const testTimeout = 10 * time.Second

// eras are the two ways a client can talk to the server: the stateless core of
// 2026-07-28, and the initialize handshake of earlier revisions. Several
// features (roots above all) travel differently in each.
var eras = []struct{ name, protocol, want string }{
	{"stateless", "", mcp.ProtocolVersion20260728},
	{"handshake", mcp.ProtocolVersion20251125, mcp.ProtocolVersion20251125},
}

// session is an mcp-go client connected to ServeStdio over in-memory pipes.
type session struct {
	c *client.Client
	// notes receives every notification the client gets. The server writes a
	// tool's notifications before its response, and the client hands them
	// over before it delivers the response, so they are all here by the time
	// a call returns.
	notes chan mcp.JSONRPCNotification
}

// connect serves the example server in-process and initializes a client
// against it. Everything is shut down, with deadlines, when t ends.
func connect(t *testing.T, protocol string, opts ...client.ClientOption) *session {
	t.Helper()
	toClient, serverOut := io.Pipe()
	serverIn, fromClient := io.Pipe()

	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- everything.ServeStdio(ctx, serverIn, serverOut) }()

	s := &session{notes: make(chan mcp.JSONRPCNotification, 100)}
	if protocol != "" {
		opts = append(opts, client.WithProtocolVersion(protocol))
	}
	s.c = client.NewClient(transport.NewIO(toClient, fromClient, nil), opts...)
	s.c.OnNotification(func(n mcp.JSONRPCNotification) {
		select {
		case s.notes <- n:
		default: // a full buffer shows up as missing notifications
		}
	})

	t.Cleanup(func() {
		// Closing the client closes the server's stdin, so ServeStdio returns.
		if err := s.c.Close(); err != nil {
			t.Errorf("closing the client: %v", err)
		}
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(testTimeout):
			t.Errorf("ServeStdio did not return within %v of stdin closing", testTimeout)
			// Unblock a server stuck writing to a client that stopped reading.
			cancel()
			toClient.CloseWithError(errors.New("test over"))
			select {
			case <-served:
			case <-time.After(testTimeout):
				t.Errorf("ServeStdio still running after cancel")
			}
		}
		cancel()
		serverOut.Close() // the client's reader goroutine sees EOF and exits
	})

	// The transport answers the server's requests with this context.
	if err := s.c.Start(ctx); err != nil {
		t.Fatalf("starting the client: %v", err)
	}
	initCtx, initCancel := context.WithTimeout(ctx, testTimeout)
	defer initCancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "everything-test", Version: "0"}
	res, err := s.c.Initialize(initCtx, req)
	if err != nil {
		t.Fatalf("initializing: %v", err)
	}
	if res.ServerInfo.Name != everything.Name {
		t.Fatalf("server name = %q, want %q", res.ServerInfo.Name, everything.Name)
	}
	return s
}

// call calls a tool, with token as its progress token when not nil.
func (s *session) call(t *testing.T, name string, args map[string]any, token mcp.ProgressToken) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	if token != nil {
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	return s.c.CallTool(ctx, req)
}

// mustCall is call for calls that must not fail at the protocol level.
func (s *session) mustCall(t *testing.T, name string, args map[string]any, token mcp.ProgressToken) *mcp.CallToolResult {
	t.Helper()
	res, err := s.call(t, name, args, token)
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

// received drains the notifications received so far.
func (s *session) received() []mcp.JSONRPCNotification {
	var got []mcp.JSONRPCNotification
	for {
		select {
		case n := <-s.notes:
			got = append(got, n)
		default:
			return got
		}
	}
}

// outcome is the comparable part of a tool result.
type outcome struct {
	Text    string
	IsError bool
}

func outcomeOf(res *mcp.CallToolResult) outcome {
	var texts []string
	for _, c := range res.Content {
		if text, ok := mcp.AsTextContent(c); ok {
			texts = append(texts, text.Text)
		}
	}
	return outcome{Text: strings.Join(texts, "\n"), IsError: res.IsError}
}

func forEachEra(t *testing.T, f func(t *testing.T, protocol string)) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) { f(t, era.protocol) })
	}
}

func TestNegotiatesEachEra(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			s := connect(t, era.protocol)
			if got := s.c.ProtocolVersion(); got != era.want {
				t.Errorf("protocol = %q, want %q", got, era.want)
			}
		})
	}
}

func TestListsTools(t *testing.T) {
	s := connect(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := s.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	want := []string{"big", "echo", "list_changed", "roots", "slow"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestEcho(t *testing.T) {
	forEachEra(t, func(t *testing.T, protocol string) {
		s := connect(t, protocol)
		got := outcomeOf(s.mustCall(t, "echo", map[string]any{"text": "hello"}, nil))
		if diff := cmp.Diff(outcome{Text: "hello"}, got); diff != "" {
			t.Errorf("echo (-want +got):\n%s", diff)
		}
	})
}

// progress is the comparable part of a notifications/progress.
type progress struct {
	Method   string
	Token    any     `json:"progressToken"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
}

func progressOf(t *testing.T, n mcp.JSONRPCNotification) progress {
	t.Helper()
	raw, err := json.Marshal(n.Params)
	if err != nil {
		t.Fatal(err)
	}
	p := progress{Method: n.Method}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return p
}

func TestSlowSendsProgressBeforeItsResult(t *testing.T) {
	forEachEra(t, func(t *testing.T, protocol string) {
		s := connect(t, protocol)
		res := s.mustCall(t, "slow", map[string]any{"ms": 60, "steps": 3}, "tok")
		if diff := cmp.Diff(outcome{Text: "done after 60 ms"}, outcomeOf(res)); diff != "" {
			t.Errorf("slow (-want +got):\n%s", diff)
		}
		var got []progress
		for _, n := range s.received() {
			got = append(got, progressOf(t, n))
		}
		want := []progress{
			{Method: "notifications/progress", Token: "tok", Progress: 1, Total: 3},
			{Method: "notifications/progress", Token: "tok", Progress: 2, Total: 3},
			{Method: "notifications/progress", Token: "tok", Progress: 3, Total: 3},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("notifications received by the time slow returned (-want +got):\n%s", diff)
		}
	})
}

func TestSlowWithoutTokenSendsNoProgress(t *testing.T) {
	s := connect(t, "")
	s.mustCall(t, "slow", map[string]any{"ms": 10, "steps": 2}, nil)
	if got := s.received(); len(got) != 0 {
		t.Errorf("got %d notifications without a progress token: %v", len(got), got)
	}
}

func TestSlowStopsWhenCancelled(t *testing.T) {
	handler := everything.New().GetTool("slow").Handler
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{"ms": 60_000, "steps": 2}

	start := time.Now()
	_, err := handler(ctx, req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow returned %v, want %v", err, context.DeadlineExceeded)
	}
	if elapsed := time.Since(start); elapsed > testTimeout {
		t.Errorf("slow took %v to notice cancellation", elapsed)
	}
}

func TestSlowCancelledByClientLeavesServerUsable(t *testing.T) {
	s := connect(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "slow"
	req.Params.Arguments = map[string]any{"ms": 60_000, "steps": 1}
	if _, err := s.c.CallTool(ctx, req); err == nil {
		t.Fatal("slow with a 50ms deadline succeeded")
	}
	got := outcomeOf(s.mustCall(t, "echo", map[string]any{"text": "still here"}, nil))
	if diff := cmp.Diff(outcome{Text: "still here"}, got); diff != "" {
		t.Errorf("echo after a cancelled call (-want +got):\n%s", diff)
	}
}

func TestListChangedNotifiesBeforeItsResult(t *testing.T) {
	forEachEra(t, func(t *testing.T, protocol string) {
		s := connect(t, protocol)
		res := s.mustCall(t, "list_changed", nil, nil)
		if diff := cmp.Diff(outcome{Text: "sent"}, outcomeOf(res)); diff != "" {
			t.Errorf("list_changed (-want +got):\n%s", diff)
		}
		var methods []string
		for _, n := range s.received() {
			methods = append(methods, n.Method)
		}
		want := []string{
			"notifications/tools/list_changed",
			"notifications/prompts/list_changed",
			"notifications/resources/list_changed",
		}
		if diff := cmp.Diff(want, methods); diff != "" {
			t.Errorf("notifications (-want +got):\n%s", diff)
		}
	})
}

// rootsFunc adapts a function to client.RootsHandler.
type rootsFunc func(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error)

func (f rootsFunc) ListRoots(ctx context.Context, req mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return f(ctx, req)
}

func TestRootsAsksTheClient(t *testing.T) {
	forEachEra(t, func(t *testing.T, protocol string) {
		var asked atomic.Int32
		s := connect(t, protocol, client.WithRootsHandler(rootsFunc(
			func(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
				asked.Add(1)
				return &mcp.ListRootsResult{Roots: []mcp.Root{
					{URI: "file:///a", Name: "a"},
					{URI: "file:///b", Name: "b"},
				}}, nil
			})))
		got := outcomeOf(s.mustCall(t, "roots", nil, nil))
		if diff := cmp.Diff(outcome{Text: "2"}, got); diff != "" {
			t.Errorf("roots (-want +got):\n%s", diff)
		}
		if n := asked.Load(); n != 1 {
			t.Errorf("the client was asked for roots %d times, want 1", n)
		}
	})
}

func TestRootsWithoutCapabilityIsToolError(t *testing.T) {
	forEachEra(t, func(t *testing.T, protocol string) {
		s := connect(t, protocol)
		got := outcomeOf(s.mustCall(t, "roots", nil, nil))
		if !got.IsError || !strings.Contains(got.Text, "roots capability") {
			t.Errorf("roots from a client without the capability = %+v, want a tool error about the capability", got)
		}
	})
}

func TestRootsClientFailure(t *testing.T) {
	failing := client.WithRootsHandler(rootsFunc(
		func(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
			return nil, errors.New("no roots today")
		}))

	t.Run("handshake", func(t *testing.T) {
		// The server sent roots/list and got an error back: a tool error.
		s := connect(t, mcp.ProtocolVersion20251125, failing)
		got := outcomeOf(s.mustCall(t, "roots", nil, nil))
		if !got.IsError || !strings.Contains(got.Text, "no roots today") {
			t.Errorf("roots = %+v, want a tool error carrying the client's error", got)
		}
	})
	t.Run("stateless", func(t *testing.T) {
		// The client fails to fulfil the input request itself and never
		// retries, so the server never learns of it: the call fails locally.
		s := connect(t, "", failing)
		_, err := s.call(t, "roots", nil, nil)
		if err == nil || !strings.Contains(err.Error(), "no roots today") {
			t.Errorf("roots error = %v, want the roots handler's error", err)
		}
	})
}

func TestBig(t *testing.T) {
	forEachEra(t, func(t *testing.T, protocol string) {
		s := connect(t, protocol)
		for _, tc := range []struct {
			args map[string]any
			want int
		}{
			{nil, 256 * 1024},
			{map[string]any{"kib": 3}, 3 * 1024},
			{map[string]any{"kib": 0}, 0},
		} {
			got := outcomeOf(s.mustCall(t, "big", tc.args, nil))
			if got.IsError || len(got.Text) != tc.want {
				t.Errorf("big %v returned %d bytes (error %v), want %d", tc.args, len(got.Text), got.IsError, tc.want)
			}
		}
	})
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	s := connect(t, "")
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"echo", nil},
		{"slow", map[string]any{"ms": -1}},
		{"slow", map[string]any{"steps": 0}},
		{"big", map[string]any{"kib": 1 << 30}},
	} {
		if got := outcomeOf(s.mustCall(t, tc.name, tc.args, nil)); !got.IsError {
			t.Errorf("%s %v = %+v, want a tool error", tc.name, tc.args, got)
		}
	}
}

func TestPromptAndResource(t *testing.T) {
	forEachEra(t, func(t *testing.T, protocol string) {
		s := connect(t, protocol)
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()

		req := mcp.GetPromptRequest{}
		req.Params.Name = "greet"
		req.Params.Arguments = map[string]string{"name": "chaos"}
		prompt, err := s.c.GetPrompt(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, m := range prompt.Messages {
			if text, ok := mcp.AsTextContent(m.Content); ok {
				texts = append(texts, text.Text)
			}
		}
		if diff := cmp.Diff([]string{"Hello, chaos!"}, texts); diff != "" {
			t.Errorf("greet (-want +got):\n%s", diff)
		}

		read := mcp.ReadResourceRequest{}
		read.Params.URI = everything.HelloURI
		resource, err := s.c.ReadResource(ctx, read)
		if err != nil {
			t.Fatal(err)
		}
		texts = nil
		for _, c := range resource.Contents {
			if text, ok := mcp.AsTextResourceContents(c); ok {
				texts = append(texts, text.Text)
			}
		}
		if diff := cmp.Diff([]string{everything.HelloText}, texts); diff != "" {
			t.Errorf("%s (-want +got):\n%s", everything.HelloURI, diff)
		}
	})
}

func TestServeStdioRefusesASecondServer(t *testing.T) {
	connect(t, "")
	err := everything.ServeStdio(context.Background(), strings.NewReader(""), io.Discard)
	if !errors.Is(err, everything.ErrAlreadyServing) {
		t.Errorf("second ServeStdio = %v, want %v", err, everything.ErrAlreadyServing)
	}
}
