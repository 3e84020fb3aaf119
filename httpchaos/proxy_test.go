package httpchaos_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/internal/ssetest"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// testTimeout bounds every wait in these tests.
const testTimeout = 10 * time.Second

// eras are the two ways an mcp-go client talks to the server: the
// stateless 2026-07-28 revision, and the initialize handshake.
var eras = []struct{ name, protocol string }{
	{"stateless", ""},
	{"handshake", mcp.ProtocolVersion20251125},
}

// rig is the bundled example server on mcp-go's streamable HTTP
// transport, the proxy in front of it, and a transcript in memory.
type rig struct {
	proxy *httpchaos.Proxy
	url   string // the proxy's MCP endpoint
	rec   *chaos.MemoryRecorder
	ended bool
}

func startRig(t *testing.T, seed uint64, specs ...string) *rig {
	t.Helper()
	return startRigWith(t, nil, seed, specs...)
}

// startRigWith is startRig with options for mcp-go's server.
func startRigWith(t *testing.T, opts []server.StreamableHTTPOption, seed uint64, specs ...string) *rig {
	t.Helper()
	upstream := httptest.NewServer(server.NewStreamableHTTPServer(everything.New(), opts...))
	t.Cleanup(upstream.Close)
	var fs []*faults.Fault
	for _, spec := range specs {
		f, err := faults.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	u, _ := url.Parse(upstream.URL + "/mcp")
	r := &rig{rec: chaos.NewMemoryRecorder()}
	p, err := httpchaos.New(httpchaos.Config{Upstream: u, Plan: faults.NewPlan(seed, fs), Recorder: r.rec, Tool: "test", Signaller: recordingSignaller{r.rec}})
	if err != nil {
		t.Fatal(err)
	}
	r.proxy = p
	front := httptest.NewServer(p)
	t.Cleanup(func() {
		r.end(t)
		front.Close()
		if t.Failed() {
			for _, e := range r.rec.Events() {
				b, _ := json.Marshal(e)
				t.Logf("transcript: %.300s", b)
			}
		}
	})
	r.url = front.URL + "/mcp"
	return r
}

// recordingSignaller stands for the process of a server the run started:
// the upstream here is in the test's own process, so a signal fault's
// signal is recorded, not sent.
type recordingSignaller struct{ rec *chaos.MemoryRecorder }

func (recordingSignaller) CanSignal(name string) string {
	if name == "SIGSTOP" {
		return "a STOP is not sent to an HTTP server"
	}
	return ""
}

func (s recordingSignaller) Signal(name, label string) {
	s.rec.Record(wire.Event{Type: wire.EventSignal, Signal: name, Fault: label, ByUs: true, Detail: "fault " + label})
}

// proxyTo puts a proxy, with a plan of the fault specs, in front of the
// upstream handler's endpoint path (/mcp, /sse), and returns the proxy's
// URL for that path (front), the proxy and its recorder. The upstream, the
// proxy and its front server are closed when the test ends.
func proxyTo(tb testing.TB, upstream http.Handler, path string, specs ...string) (front string, p *httpchaos.Proxy, rec *chaos.MemoryRecorder) {
	tb.Helper()
	up := httptest.NewServer(upstream)
	tb.Cleanup(up.Close)
	u, _ := url.Parse(up.URL + path)
	return proxyToURL(tb, u, specs...)
}

// proxyToURL is proxyTo for an upstream endpoint that is already served.
func proxyToURL(tb testing.TB, upstream *url.URL, specs ...string) (front string, p *httpchaos.Proxy, rec *chaos.MemoryRecorder) {
	tb.Helper()
	var fs []*faults.Fault
	for _, spec := range specs {
		f, err := faults.Parse(spec)
		if err != nil {
			tb.Fatal(err)
		}
		fs = append(fs, f)
	}
	rec = chaos.NewMemoryRecorder()
	p, err := httpchaos.New(httpchaos.Config{Upstream: upstream, Plan: faults.NewPlan(1, fs), Recorder: rec})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(p)
	tb.Cleanup(func() {
		p.Close("the test ended")
		srv.Close()
	})
	return srv.URL + upstream.Path, p, rec
}

// end closes the session, once.
func (r *rig) end(t *testing.T) judge.Verdict {
	t.Helper()
	if !r.ended {
		r.ended = true
		if err := r.proxy.Close("the test ended"); err != nil {
			t.Errorf("closing the proxy: %v", err)
		}
	}
	return judge.Session(r.rec.Events())
}

// dial connects an mcp-go client through the proxy and initializes it.
func (r *rig) dial(t *testing.T, protocol string, opts ...transport.StreamableHTTPCOption) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(r.url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var copts []client.ClientOption
	if protocol != "" {
		copts = append(copts, client.WithProtocolVersion(protocol))
	}
	c := client.NewClient(tr, copts...)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	// Start's context is the life of the client's GET stream, when it
	// opens one: the client's, not the handshake's.
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("starting the client: %v", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "httpchaos-test", Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initializing through the proxy: %v", err)
	}
	return c
}

func call(c *client.Client, timeout time.Duration, name string, args map[string]any, token mcp.ProgressToken) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	if token != nil {
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	return c.CallTool(ctx, req)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// messages lists the transcript's message events as "type dir kind method".
func messages(events []wire.Event, types ...string) []string {
	var out []string
	for _, e := range events {
		for _, typ := range types {
			if e.Type == typ && e.Kind != "" {
				out = append(out, e.Type+" "+e.Dir+" "+e.Kind+" "+e.Method)
			}
		}
	}
	return out
}

// With no fault the proxy is invisible: the real client and server do
// what they do directly, every message is received and forwarded, and the
// judge finds nothing.
func TestPassThrough(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			r := startRig(t, 1)
			c := r.dial(t, era.protocol)
			res, err := call(c, testTimeout, "echo", map[string]any{"text": "hi"}, nil)
			if err != nil || text(res) != "hi" {
				t.Fatalf("echo through the proxy: %v, %+v", err, res)
			}
			var progress []float64
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method == "notifications/progress" {
					progress = append(progress, n.Params.AdditionalFields["progress"].(float64))
				}
			})
			if _, err := call(c, testTimeout, "slow", map[string]any{"ms": 100, "steps": 3}, "p1"); err != nil {
				t.Fatalf("slow through the proxy: %v", err)
			}
			c.Close()
			v := r.end(t)
			if len(v.Findings) != 0 {
				t.Errorf("findings on a clean run: %+v", v.Findings)
			}
			events := r.rec.Events()
			received := messages(events, wire.EventReceived)
			forwarded := 0
			for _, e := range events {
				if e.Type == wire.EventForwarded {
					forwarded++
				}
				if e.Type == wire.EventDropped || e.Type == wire.EventError {
					t.Errorf("unexpected %s event: %+v", e.Type, e)
				}
			}
			if forwarded != len(received) {
				t.Errorf("%d messages received, %d forwarded:\n%s", len(received), forwarded, strings.Join(received, "\n"))
			}
			// mcp-go's server queues a tool's notifications per session and
			// may send the last after the response has ended the stream;
			// those that made it are recorded, in the call's stream.
			var notes int
			for _, e := range events {
				if e.Type == wire.EventReceived && e.Method == "notifications/progress" {
					notes++
					if e.Exchange == 0 {
						t.Errorf("progress notification without its exchange: %+v", e)
					}
				}
			}
			if notes == 0 || notes != len(progress) {
				t.Errorf("%d progress notifications recorded, the client got %d:\n%s", notes, len(progress), strings.Join(received, "\n"))
			}
		})
	}
}

// drop on the answer of a tools/call: the client never gets it and gives
// up; the server answered, so the judge blames nothing on it.
func TestDropAnswer(t *testing.T) {
	r := startRig(t, 1, "drop:on=s2c:response:tools/call")
	c := r.dial(t, mcp.ProtocolVersion20251125)
	start := time.Now()
	if _, err := call(c, 500*time.Millisecond, "echo", map[string]any{"text": "hi"}, nil); err == nil {
		t.Fatal("the call succeeded, want it lost")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the client waited %v", d)
	}
	c.Close()
	v := r.end(t)
	if len(v.Findings) != 0 {
		t.Errorf("findings: %+v", v.Findings)
	}
	var dropped []string
	for _, e := range r.rec.Events() {
		if e.Type == wire.EventDropped {
			dropped = append(dropped, e.Detail)
		}
	}
	if diff := cmp.Diff([]string{"dropped by fault drop#1"}, dropped); diff != "" {
		t.Errorf("dropped (-want +got):\n%s", diff)
	}
}

// eof cuts the client's connection: after it sent a tools/call, or before
// a progress event of the call's stream. Either way the client fails the
// call promptly. By default the cut ends the server's side too, as a
// network cut does, so its answer never comes, and the judge notes that
// as the fault's doing; with server=read the server's side stays open and
// its answer is read into the record, so the judge sees it answered.
// Neither is held against the server.
func TestEOFCutsTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       []string
		// note is what the judge notes of the call, "" for nothing.
		note string
	}{
		{"after the request", "eof:on=c2s:request:tools/call", []string{
			"connection cut by fault eof#1; the server's side closed too",
		}, "cut the exchange its answer travels on at both ends"},
		{"before an event", "eof:on=s2c:notification:notifications/progress,position=before", []string{
			"dropped s2c notification: the client's stream was cut by fault eof#1 before this message",
			"connection cut by fault eof#1; the server's side closed too",
		}, "cut the exchange its answer travels on at both ends"},
		{"after the request, the server's side read", "eof:on=c2s:request:tools/call,server=read", []string{
			"connection cut by fault eof#1; the server's side stays open, read into the record",
			"dropped s2c response: the client's connection was cut by fault eof#1",
		}, ""},
		{"before an event, the server's side read", "eof:on=s2c:notification:notifications/progress,position=before,server=read", []string{
			"dropped s2c notification: the client's stream was cut by fault eof#1 before this message",
			"connection cut by fault eof#1; the server's side stays open, read into the record",
			"dropped s2c response: the client's stream was cut by fault eof#1",
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startRig(t, 1, tc.spec)
			c := r.dial(t, mcp.ProtocolVersion20251125)
			start := time.Now()
			if _, err := call(c, testTimeout, "slow", map[string]any{"ms": 200, "steps": 2}, "p1"); err == nil {
				t.Fatal("the call succeeded, want it cut")
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("the client took %v to see the cut", d)
			}
			c.Close()
			if tc.note == "" {
				// The server's answer reaches the record after the cut.
				r.waitFor(t, func(e wire.Event) bool {
					return e.Type == wire.EventDropped && strings.Contains(e.Detail, "cut by fault") && r.kindOf(e.Of) == "response"
				})
			} else {
				// Had the server's side stayed open, its answer would come
				// 200ms after the call.
				time.Sleep(400 * time.Millisecond)
			}
			v := r.end(t)
			if len(v.Findings) != 0 {
				t.Errorf("findings: %+v", v.Findings)
			}
			notes := strings.Join(v.Notes, "\n")
			if tc.note != "" && !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q; want one saying %q", notes, tc.note)
			}
			var got []string
			for _, e := range r.rec.Events() {
				switch {
				case e.Type == wire.EventHTTP && strings.HasPrefix(e.Detail, "connection cut"):
					got = append(got, e.Detail)
				case e.Type == wire.EventDropped:
					kind := r.kindOf(e.Of)
					// How many more notifications the server sent after the
					// cut is its timing.
					if kind != "notification" || strings.HasSuffix(e.Detail, "before this message") {
						got = append(got, "dropped "+e.Dir+" "+kind+": "+e.Detail)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// kindOf is the kind of the message event seq.
func (r *rig) kindOf(seq int64) string {
	for _, e := range r.rec.Events() {
		if e.Seq == seq {
			return e.Kind
		}
	}
	return ""
}

// waitFor waits until an event satisfies ok.
func (r *rig) waitFor(t *testing.T, ok func(wire.Event) bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		for _, e := range r.rec.Events() {
			if ok(e) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("the event awaited was not recorded within %v", testTimeout)
}

// server-request mid-call: a roots/list request reaches the real client
// in the tool call's stream, the client answers it by POST, and the proxy
// swallows the answer so the server never sees an answer to a request it
// did not send.
func TestServerRequestIntoTheStream(t *testing.T) {
	r := startRig(t, 1, "server-request:method=roots/list,on=s2c:notification:notifications/progress")
	c := r.dial(t, mcp.ProtocolVersion20251125)
	if _, err := call(c, testTimeout, "slow", map[string]any{"ms": 300, "steps": 3}, "p1"); err != nil {
		t.Fatalf("slow: %v", err)
	}
	// The client answers the injected request on its own time, perhaps
	// after the call it came in has returned.
	r.waitFor(t, func(e wire.Event) bool { return e.Type == wire.EventDropped })
	c.Close()
	v := r.end(t)
	if len(v.Findings) != 0 {
		t.Errorf("findings: %+v", v.Findings)
	}
	var got []string
	for _, e := range r.rec.Events() {
		switch {
		case e.Type == wire.EventInjected:
			got = append(got, "injected "+e.Dir+" "+e.Method)
		case e.Type == wire.EventDropped:
			got = append(got, "dropped: "+e.Detail)
		}
	}
	// An injection is recorded once written, so the client's answer,
	// swallowed, may be recorded first: the order is not what is tested.
	want := []string{"dropped: the answer to a request injected by fault server-request#1", "injected s2c roots/list"}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A fault with no HTTP meaning is refused before the proxy starts.
func TestRefusesFaultsWithoutAnHTTPMeaning(t *testing.T) {
	f, err := faults.Parse("half-close")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://127.0.0.1:1/mcp")
	_, err = httpchaos.New(httpchaos.Config{Upstream: u, Plan: faults.NewPlan(1, []*faults.Fault{f})})
	if err == nil || !strings.Contains(err.Error(), "half-close has no meaning on HTTP") {
		t.Fatalf("New = %v, want the half-close refused", err)
	}
}

// The legacy HTTP+SSE transport through the proxy: the endpoint event the
// server sends names the server, so the proxy rewrites it to its own; the
// client then POSTs through the proxy, and the answers come on the GET
// stream, recorded with the exchange that carried them. A server names
// itself as it knows itself: by the address the proxy was given, or as
// localhost or 0.0.0.0 (mcp-go 0.20's example says localhost), which on
// the upstream's port is the same server.
func TestLegacySSE(t *testing.T) {
	for _, name := range []string{"the upstream's address", "localhost", "0.0.0.0"} {
		t.Run(name, func(t *testing.T) { testLegacySSE(t, name) })
	}
}

func testLegacySSE(t *testing.T, name string) {
	upstream := httptest.NewUnstartedServer(nil)
	upstream.Start()
	defer upstream.Close()
	base, _ := url.Parse(upstream.URL)
	if name != "the upstream's address" {
		base.Host = net.JoinHostPort(name, base.Port())
	}
	upstream.Config.Handler = server.NewSSEServer(everything.New(), server.WithBaseURL(base.String()))
	u, _ := url.Parse(upstream.URL + "/sse")
	front, p, rec := proxyToURL(t, u)

	c, err := client.NewSSEMCPClient(front)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "legacy", Version: "0"}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20241105
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize over legacy SSE through the proxy: %v", err)
	}
	res, err := call(c, testTimeout, "echo", map[string]any{"text": "legacy"}, nil)
	if err != nil || text(res) != "legacy" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	c.Close()
	if err := p.Close("the test ended"); err != nil {
		t.Error(err)
	}
	events := rec.Events()
	var rewrote bool
	for _, e := range events {
		if e.Type == wire.EventHTTP && strings.HasPrefix(e.Detail, "the legacy transport's endpoint event, rewritten to point at the proxy: "+strings.TrimSuffix(front, "/sse")+"/message?sessionId=") {
			rewrote = true
		}
	}
	if !rewrote {
		t.Error("the endpoint event was not rewritten to the proxy")
	}
	got := messages(events, wire.EventReceived)
	want := []string{
		"received c2s request initialize", "received s2c response ",
		"received c2s notification notifications/initialized",
		"received c2s request tools/call", "received s2c response ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if v := judge.Session(events); len(v.Findings) != 0 {
		t.Errorf("findings: %+v", v.Findings)
	}
}

// A request the proxy could not even connect to the upstream for never
// reached the server: it is recorded as dropped, so the judge does not hold
// a server that had died (or never listened) to answering it.
func TestARequestToAnUpstreamThatIsGoneIsNotOwed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://" + l.Addr().String() + "/mcp")
	l.Close() // nothing listens there now
	front, _, rec := proxyToURL(t, u)
	resp, err := http.Post(front, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d; want 502", resp.StatusCode)
	}
	var received int64
	var dropped *wire.Event
	for _, e := range rec.Events() {
		switch {
		case e.Type == wire.EventReceived && e.ID == "7":
			received = e.Seq
		case e.Type == wire.EventDropped:
			dropped = &e
		}
	}
	if received == 0 || dropped == nil || dropped.Of != received {
		t.Fatalf("received seq %d, dropped %+v; want the request dropped", received, dropped)
	}
	if v := judge.Session(rec.Events()); len(v.Findings) != 0 {
		t.Errorf("findings %+v; want none: the server never had the request", v.Findings)
	}
}

// A legacy server may echo its answer in the body of the POST that carried
// the request, as mcp-go 0.20's did (202, application/json). On the legacy
// transport every server message comes on the GET stream and a client reads
// no POST's body: the server answered once, and the body is recorded as an
// HTTP body, not a second answer.
func TestLegacyPOSTBodyIsNoMessage(t *testing.T) {
	front, p, rec := proxyTo(t, ssetest.EchoingServer(), "/sse")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, front, nil)
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	endpoint := ""
	for endpoint == "" {
		line, err := stream.ReadString('\n')
		if err != nil {
			t.Fatalf("no endpoint event: %v", err)
		}
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = data
		}
	}
	target, _ := url.Parse(front)
	ep, _ := url.Parse(endpoint)
	post, err := http.Post(target.ResolveReference(ep).String(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, post.Body)
	post.Body.Close()
	for {
		line, err := stream.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer on the stream: %v", err)
		}
		if strings.HasPrefix(line, "data: {") {
			break
		}
	}
	cancel()
	if err := p.Close("the test ended"); err != nil {
		t.Error(err)
	}
	events := rec.Events()
	if diff := cmp.Diff([]string{"received c2s request ping", "received s2c response "}, messages(events, wire.EventReceived)); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if v := judge.Session(events); len(v.Findings) != 0 {
		t.Errorf("findings: %+v", v.Findings)
	}
}

// WaitIdle is how test --url -- CMD stops a server only once the proxy has
// passed the client's hang-up on: with a stream open it waits out its
// bound, and once the client closed the stream the upstream sees its own
// stream closed by the time WaitIdle returns.
func TestWaitIdle(t *testing.T) {
	upstreamDone := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", ssetest.Stream("/message", nil, func() { close(upstreamDone) }))
	front, p, _ := proxyTo(t, mux, "/sse")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, front, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if p.WaitIdle(100 * time.Millisecond) {
		t.Error("WaitIdle says idle with a stream open")
	}
	cancel()
	resp.Body.Close()
	if !p.WaitIdle(2 * time.Second) {
		t.Fatal("WaitIdle: the stream's exchange still runs 2s after the client closed it")
	}
	select {
	case <-upstreamDone:
	case <-time.After(time.Second):
		t.Error("the upstream's stream is still open once the proxy is idle")
	}
}

// TestHangUpIdle: once the proxy hangs up, the server holds no connection
// of it open, so that a server stopped next (Go's Shutdown waits for its
// connections) is not kept waiting by the proxy's keep-alive.
func TestHangUpIdle(t *testing.T) {
	var mu sync.Mutex
	open := map[net.Conn]http.ConnState{}
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	up.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		if s == http.StateClosed || s == http.StateHijacked {
			delete(open, c)
			return
		}
		open[c] = s
	}
	up.Start()
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL + "/mcp")
	front, p, _ := proxyToURL(t, u)
	for i := 0; i < 3; i++ {
		resp, err := http.Post(front, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(open) }
	if count() == 0 {
		t.Fatal("the proxy keeps no connection to the server alive; nothing to hang up")
	}
	p.HangUpIdle()
	for deadline := time.Now().Add(2 * time.Second); count() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connection(s) of the proxy still open at the server 2s after HangUpIdle", count())
		}
	}
}
