package everything_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	want := []string{"big", "echo", "elicit", "list_changed", "log", "ping_client", "research", "roots", "sample", "slow", "touch"}
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

// samplingFunc adapts a function to client.SamplingHandler.
type samplingFunc func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)

func (f samplingFunc) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return f(ctx, req)
}

// elicitationFunc adapts a function to client.ElicitationHandler.
type elicitationFunc func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitationFunc) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, req)
}

func TestSampleAsksTheClient(t *testing.T) {
	forEachEra(t, func(t *testing.T, protocol string) {
		var asked atomic.Int32
		s := connect(t, protocol, client.WithSamplingHandler(samplingFunc(
			func(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				asked.Add(1)
				if len(req.Messages) != 1 || req.MaxTokens <= 0 {
					return nil, errors.New("unexpected sampling request")
				}
				return &mcp.CreateMessageResult{
					SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("hello, mcpchaos")},
					Model:           "test-model",
					StopReason:      "endTurn",
				}, nil
			})))
		got := outcomeOf(s.mustCall(t, "sample", nil, nil))
		if diff := cmp.Diff(outcome{Text: "hello, mcpchaos"}, got); diff != "" {
			t.Errorf("sample (-want +got):\n%s", diff)
		}
		if n := asked.Load(); n != 1 {
			t.Errorf("the client was asked to sample %d times, want 1", n)
		}
	})
}

func TestElicitAsksTheClient(t *testing.T) {
	for _, action := range []mcp.ElicitationResponseAction{
		mcp.ElicitationResponseActionAccept,
		mcp.ElicitationResponseActionDecline,
		mcp.ElicitationResponseActionCancel,
	} {
		t.Run(string(action), func(t *testing.T) {
			forEachEra(t, func(t *testing.T, protocol string) {
				var asked atomic.Int32
				s := connect(t, protocol, client.WithElicitationHandler(elicitationFunc(
					func(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
						asked.Add(1)
						if req.Params.Message == "" || req.Params.RequestedSchema == nil {
							return nil, errors.New("unexpected elicitation request")
						}
						res := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action}}
						if action == mcp.ElicitationResponseActionAccept {
							res.Content = map[string]any{"name": "chaos"}
						}
						return res, nil
					})))
				got := outcomeOf(s.mustCall(t, "elicit", nil, nil))
				if diff := cmp.Diff(outcome{Text: string(action)}, got); diff != "" {
					t.Errorf("elicit (-want +got):\n%s", diff)
				}
				if n := asked.Load(); n != 1 {
					t.Errorf("the client was asked to elicit %d times, want 1", n)
				}
			})
		})
	}
}

func TestSampleAndElicitWithoutCapabilityAreToolErrors(t *testing.T) {
	forEachEra(t, func(t *testing.T, protocol string) {
		s := connect(t, protocol)
		for tool, want := range map[string]string{"sample": "sampling capability", "elicit": "elicitation capability"} {
			got := outcomeOf(s.mustCall(t, tool, nil, nil))
			if !got.IsError || !strings.Contains(got.Text, want) {
				t.Errorf("%s from a client without the capability = %+v, want a tool error about the %s", tool, got, want)
			}
		}
	})
}

func TestSampleAndElicitClientFailure(t *testing.T) {
	opts := []client.ClientOption{
		client.WithSamplingHandler(samplingFunc(
			func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return nil, errors.New("no model today")
			})),
		client.WithElicitationHandler(elicitationFunc(
			func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
				return nil, errors.New("no user today")
			})),
	}
	want := map[string]string{"sample": "no model today", "elicit": "no user today"}

	t.Run("handshake", func(t *testing.T) {
		// The server sent the request and got an error back: a tool error.
		s := connect(t, mcp.ProtocolVersion20251125, opts...)
		for tool, text := range want {
			got := outcomeOf(s.mustCall(t, tool, nil, nil))
			if !got.IsError || !strings.Contains(got.Text, text) {
				t.Errorf("%s = %+v, want a tool error carrying %q", tool, got, text)
			}
		}
	})
	t.Run("stateless", func(t *testing.T) {
		// As with roots: the client fails to fulfil the input request and
		// never retries, so the call fails locally.
		s := connect(t, "", opts...)
		for tool, text := range want {
			if _, err := s.call(t, tool, nil, nil); err == nil || !strings.Contains(err.Error(), text) {
				t.Errorf("%s error = %v, want the handler's error %q", tool, err, text)
			}
		}
	})
}

// TestSampleStopsWhenCancelled checks that a tool waiting for the client's
// answer gives up when the call is cancelled, and the server stays usable.
func TestSampleStopsWhenCancelled(t *testing.T) {
	release := make(chan struct{})
	s := connect(t, mcp.ProtocolVersion20251125, client.WithSamplingHandler(samplingFunc(
		func(ctx context.Context, _ mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			select { // a client that never answers, until the test ends
			case <-release:
			case <-ctx.Done():
			}
			return nil, errors.New("too late")
		})))
	t.Cleanup(func() { close(release) }) // runs before connect's cleanup

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "sample"
	if _, err := s.c.CallTool(ctx, req); err == nil {
		t.Fatal("sample with a 50ms deadline succeeded")
	}
	got := outcomeOf(s.mustCall(t, "echo", map[string]any{"text": "still here"}, nil))
	if diff := cmp.Diff(outcome{Text: "still here"}, got); diff != "" {
		t.Errorf("echo after a cancelled sample (-want +got):\n%s", diff)
	}
}

func TestPingClient(t *testing.T) {
	t.Run("handshake", func(t *testing.T) {
		s := connect(t, mcp.ProtocolVersion20251125)
		got := outcomeOf(s.mustCall(t, "ping_client", nil, nil))
		if diff := cmp.Diff(outcome{Text: "pong"}, got); diff != "" {
			t.Errorf("ping_client (-want +got):\n%s", diff)
		}
	})
	t.Run("stateless", func(t *testing.T) {
		// The revision has no server-to-client requests, and no input
		// request stands in for a ping.
		s := connect(t, "")
		got := outcomeOf(s.mustCall(t, "ping_client", nil, nil))
		if !got.IsError || !strings.Contains(got.Text, "2026-07-28") {
			t.Errorf("ping_client = %+v, want a tool error naming the revision", got)
		}
	})
	t.Run("New", func(t *testing.T) {
		// mcp-go's transports offer no way to ping the client.
		handler := everything.New().GetTool("ping_client").Handler
		res, err := handler(context.Background(), mcp.CallToolRequest{})
		if err != nil || !res.IsError {
			t.Errorf("ping_client on New() = %+v, %v; want a tool error", res, err)
		}
	})
}

// rawClient speaks newline-delimited JSON-RPC to ServeStdio by hand, for the
// exchanges an mcp-go client cannot be made to produce.
type rawClient struct {
	t     *testing.T
	w     io.Writer
	lines chan map[string]any
}

func connectRaw(t *testing.T) *rawClient {
	toClient, serverOut := io.Pipe()
	serverIn, fromClient := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- everything.ServeStdio(context.Background(), serverIn, serverOut) }()
	c := &rawClient{t: t, w: fromClient, lines: make(chan map[string]any, 100)}
	go func() {
		defer close(c.lines)
		dec := json.NewDecoder(toClient)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				return
			}
			c.lines <- m
		}
	}()
	t.Cleanup(func() {
		fromClient.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(testTimeout):
			t.Errorf("ServeStdio did not return within %v of stdin closing", testTimeout)
		}
		serverOut.Close()
		toClient.Close()
	})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if m := c.next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize answered with %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatalf("writing %s: %v", line, err)
	}
}

func (c *rawClient) next() map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the server closed its output")
		}
		return m
	case <-time.After(testTimeout):
		c.t.Fatalf("nothing from the server within %v", testTimeout)
	}
	return nil
}

// TestPingClientRaw covers what an mcp-go client never does: answer a ping with
// an error, not answer it until the call is cancelled, answer it late.
func TestPingClientRaw(t *testing.T) {
	c := connectRaw(t)

	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping_client"}}`)
	ping := c.next()
	if ping["method"] != "ping" {
		t.Fatalf("ping_client sent %v, want a ping", ping)
	}
	id, _ := json.Marshal(ping["id"])
	c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32603,"message":"busy"}}`)
	res := c.next()
	if res["id"] != 2.0 || !strings.Contains(fmt.Sprint(res["result"]), "busy") || !strings.Contains(fmt.Sprint(res["result"]), "isError:true") {
		t.Errorf("ping_client answered with an error = %v, want a tool error carrying it", res)
	}

	// Never answered: cancelling the call ends the wait.
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ping_client"}}`)
	ping = c.next()
	if ping["method"] != "ping" {
		t.Fatalf("ping_client sent %v, want a ping", ping)
	}
	start := time.Now()
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	// The late answer is taken by the server, not mistaken for a request.
	id, _ = json.Marshal(ping["id"])
	c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{}}`)
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
	// mcp-go answers a cancelled call (as it does slow's); that answer shows
	// the tool stopped waiting, long before pingTimeout.
	var cancelled, echoed bool
	for !cancelled || !echoed {
		switch m := c.next(); m["id"] {
		case 3.0:
			cancelled = true
		case 4.0:
			echoed = true
			if !strings.Contains(fmt.Sprint(m["result"]), "still here") {
				t.Errorf("echo answered %v", m)
			}
		default:
			t.Fatalf("unexpected message from the server: %v", m)
		}
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the server took %v to get over a cancelled ping", elapsed)
	}
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
		// What the inputSchema refuses (issue 40's hostile-input): not
		// taken for 0 or the default.
		{"big", map[string]any{"kib": 0.5}},
		{"big", map[string]any{"kib": "many"}},
		{"slow", map[string]any{"ms": nil}},
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
