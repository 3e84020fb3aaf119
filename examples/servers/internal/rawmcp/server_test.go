package rawmcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/mcptest"
	"github.com/mcpchaos/mcpchaos/internal/leakcheck"
)

// wait bounds every wait in these tests.
const wait = 5 * time.Second

// msg is a message the server wrote.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	raw    string
}

// conn is a scripted client talking to a Server running in this process.
type conn struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	served chan error
}

// serve runs s on pipes until the test ends; the test closes stdin with
// c.close() or lets the cleanup do it.
func serve(t *testing.T, s *Server) *conn {
	t.Helper()
	if s.Name == "" {
		s.Name = "test"
	}
	if s.ErrorLog == nil {
		s.ErrorLog = log.New(testWriter{t}, "server: ", 0)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &conn{t: t, in: inW, lines: make(chan string, 4096), served: make(chan error, 1)}
	go func() {
		c.served <- s.Serve(inR, outW)
		outW.Close()
	}()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, MaxLine)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.served:
		case <-time.After(wait):
			t.Errorf("Serve did not return within %v of stdin closing", wait)
		}
		for range c.lines {
		}
		<-readerDone
	})
	return c
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func (c *conn) send(format string, args ...any) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		c.t.Fatalf("writing to the server: %v", err)
	}
}

// next returns the next message the server wrote.
func (c *conn) next() msg {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the server's output ended")
		}
		var m msg
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			c.t.Fatalf("server wrote a line that is not JSON: %q", line)
		}
		m.raw = line
		return m
	case <-time.After(wait):
		c.t.Fatalf("no message from the server within %v", wait)
		return msg{}
	}
}

// response reads until the response to id, returning it and what came before.
func (c *conn) response(id string) (msg, []msg) {
	c.t.Helper()
	var before []msg
	for {
		m := c.next()
		if m.Method == "" && string(m.ID) == id {
			return m, before
		}
		before = append(before, m)
	}
}

// result returns the result of the response to id, decoded, failing on an error.
func (c *conn) result(id string) map[string]any {
	c.t.Helper()
	m, _ := c.response(id)
	if m.Error != nil {
		c.t.Fatalf("request %s: %v", id, m.Error)
	}
	var r map[string]any
	if err := json.Unmarshal(m.Result, &r); err != nil {
		c.t.Fatalf("request %s: result %s: %v", id, m.Result, err)
	}
	return r
}

// close closes the server's stdin and waits for Serve to return, then for the
// rest of its output, which it returns.
func (c *conn) close() (error, []msg) {
	c.t.Helper()
	c.in.Close()
	var err error
	select {
	case err = <-c.served:
		c.served <- err // for the cleanup
	case <-time.After(wait):
		c.t.Fatalf("Serve did not return within %v of stdin closing", wait)
	}
	var rest []msg
	for line := range c.lines {
		var m msg
		if json.Unmarshal([]byte(line), &m) != nil {
			c.t.Fatalf("server wrote a line that is not JSON: %q", line)
		}
		m.raw = line
		rest = append(rest, m)
	}
	return err, rest
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

func TestEras(t *testing.T) {
	tests := []struct {
		name         string
		statefulOnly bool
		request      string // params of request id 1
		method       string
		want         string // the whole result, or the error
	}{
		{
			name: "initialize echoes a supported version", method: "initialize",
			request: `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`,
			want:    `{"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"test","version":"1.0"}}}`,
		},
		{
			name: "initialize offers the newest stateful version for an unknown one", method: "initialize",
			request: `{"protocolVersion":"2024-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`,
			want:    `{"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"test","version":"1.0"}}}`,
		},
		{
			name: "ping", method: "ping", request: `{}`,
			want: `{"result":{}}`,
		},
		{
			name: "server/discover", method: "server/discover", request: `{` + statelessMeta + `}`,
			want: `{"result":{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],"capabilities":{"tools":{}},
				"resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1.0"}}}}`,
		},
		{
			name: "stateless tools/call", method: "tools/call",
			request: `{"name":"echo","arguments":{"text":"hi"},` + statelessMeta + `}`,
			want:    `{"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"test","version":"1.0"}}}}`,
		},
		{
			name: "stateless request with an unknown version", method: "tools/list",
			request: `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01"}}`,
			want: `{"error":{"code":-32022,"message":"unsupported protocol version \"2030-01-01\"",
				"data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],"requested":"2030-01-01"}}}`,
		},
		{
			name: "stateful-only refuses server/discover", statefulOnly: true, method: "server/discover",
			request: `{` + statelessMeta + `}`,
			want:    `{"error":{"code":-32601,"message":"Method not found"}}`,
		},
		{
			name: "stateful-only refuses stateless requests", statefulOnly: true, method: "tools/list",
			request: `{` + statelessMeta + `}`,
			want: `{"error":{"code":-32022,"message":"unsupported protocol version \"2026-07-28\"",
				"data":{"supported":["2025-11-25","2025-06-18","2025-03-26"],"requested":"2026-07-28"}}}`,
		},
		{
			name: "unknown method", method: "resources/list", request: `{}`,
			want: `{"error":{"code":-32601,"message":"Method not found"}}`,
		},
		{
			name: "unknown tool", method: "tools/call", request: `{"name":"nope"}`,
			want: `{"error":{"code":-32602,"message":"unknown tool \"nope\""}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, &Server{Version: "1.0", StatefulOnly: tc.statefulOnly, Tools: []Tool{Echo(), Slow()}})
			c.send(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, tc.method, tc.request)
			m, before := c.response("1")
			if len(before) > 0 {
				t.Errorf("messages before the response: %v", before)
			}
			got := map[string]any{}
			if m.Error != nil {
				got["error"] = decode(t, mustString(m.Error))
			} else {
				got["result"] = decode(t, string(m.Result))
			}
			if diff := cmp.Diff(decode(t, tc.want), got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func mustString(v any) string { return string(mustJSON(v)) }

func TestToolsList(t *testing.T) {
	c := serve(t, &Server{Tools: []Tool{Echo(), Slow()}})
	c.send(`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`)
	var names []string
	for _, tool := range c.result(`"a"`)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"echo", "slow"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestToolCallWithProgress(t *testing.T) {
	c := serve(t, &Server{Tools: []Tool{Echo(), Slow()}})
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":30},"_meta":{"progressToken":"tok"}}}`)
	m, before := c.response("2")
	var progress []string
	for _, n := range before {
		if n.Method != "notifications/progress" {
			t.Errorf("unexpected message before the result: %s", n.raw)
		}
		progress = append(progress, string(n.Params))
	}
	want := []string{
		`{"progress":1,"progressToken":"tok","total":3}`,
		`{"progress":2,"progressToken":"tok","total":3}`,
		`{"progress":3,"progressToken":"tok","total":3}`,
	}
	if diff := cmp.Diff(want, progress); diff != "" {
		t.Errorf("progress notifications (-want +got):\n%s", diff)
	}
	if got := string(m.Result); got != `{"content":[{"text":"slept 30ms","type":"text"}]}` {
		t.Errorf("result = %s", got)
	}

	// Without a progress token there is nothing to report on.
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"ms":3}}}`)
	if _, before := c.response("3"); len(before) != 0 {
		t.Errorf("messages before a token-less result: %v", before)
	}
}

// rootsTool asks the client for its roots and answers them.
func rootsTool() Tool {
	return Tool{Name: "roots", Run: func(ctx context.Context, c *Call) (string, error) {
		roots, err := c.Request(ctx, "roots/list", nil)
		if err != nil {
			return "", err
		}
		return string(roots), nil
	}}
}

func TestServerToClientRequest(t *testing.T) {
	c := serve(t, &Server{Tools: []Tool{rootsTool()}})
	for i, answer := range []struct{ reply, want string }{
		{`"result":{"roots":[{"uri":"file:///w"}]}`, `{"content":[{"text":"{\"roots\":[{\"uri\":\"file:///w\"}]}","type":"text"}]}`},
		{`"error":{"code":-32601,"message":"no roots here"}`, `{"content":[{"text":"JSON-RPC error -32601: no roots here","type":"text"}],"isError":true}`},
	} {
		id := fmt.Sprint(10 + i)
		c.send(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"roots"}}`, id)
		req := c.next()
		if req.Method != "roots/list" || req.ID == nil {
			t.Fatalf("want a roots/list request, got %s", req.raw)
		}
		c.send(`{"jsonrpc":"2.0","id":%s,%s}`, req.ID, answer.reply)
		if got := string(c.result2(id)); got != answer.want {
			t.Errorf("with the client answering %s: result = %s, want %s", answer.reply, got, answer.want)
		}
	}

	// The stateless era has no server-to-client requests.
	c.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"roots",%s}}`, statelessMeta)
	if got := c.result("20"); got["isError"] != true || !strings.Contains(fmt.Sprint(got["content"]), "stateless") {
		t.Errorf("stateless roots call = %v, want a tool error about the era", got)
	}
}

// result2 is result without decoding.
func (c *conn) result2(id string) json.RawMessage {
	c.t.Helper()
	m, before := c.response(id)
	if len(before) > 0 {
		c.t.Errorf("messages before the response to %s: %v", id, before)
	}
	if m.Error != nil {
		c.t.Fatalf("request %s: %v", id, m.Error)
	}
	return m.Result
}

func TestEOFWaitsForHandlersInFlight(t *testing.T) {
	var atEOF sync.WaitGroup
	atEOF.Add(1)
	c := serve(t, &Server{Tools: []Tool{Slow()}, AtEOF: atEOF.Done})
	for id := 1; id <= 3; id++ {
		c.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"ms":200}}}`, id)
	}
	// The ping's answer shows the read loop has taken all three calls.
	c.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if _, before := c.response(`"p"`); len(before) != 0 {
		t.Fatalf("calls answered before the ping: %v", before)
	}
	err, rest := c.close()
	if err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	atEOF.Wait()
	answered := map[string]bool{}
	for _, m := range rest {
		if m.Result != nil {
			answered[string(m.ID)] = true
		}
	}
	if diff := cmp.Diff(map[string]bool{"1": true, "2": true, "3": true}, answered); diff != "" {
		t.Errorf("calls answered after stdin closed (-want +got):\n%s", diff)
	}
}

func TestEOFFailsPendingServerRequests(t *testing.T) {
	c := serve(t, &Server{Tools: []Tool{rootsTool()}})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots"}}`)
	if req := c.next(); req.Method != "roots/list" {
		t.Fatalf("want a roots/list request, got %s", req.raw)
	}
	start := time.Now()
	err, rest := c.close()
	if err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Serve took %v to return after stdin closed", took)
	}
	if len(rest) != 1 || !strings.Contains(string(rest[0].Result), `"isError":true`) || !strings.Contains(string(rest[0].Result), "connection closed") {
		t.Errorf("after EOF the server wrote %v, want one tool error about the closed connection", rest)
	}
}

func TestHandlerWaitIsBounded(t *testing.T) {
	c := serve(t, &Server{Tools: []Tool{rootsTool()}, KeepPendingAtEOF: true, HandlerWait: 100 * time.Millisecond})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots"}}`)
	if req := c.next(); req.Method != "roots/list" {
		t.Fatalf("want a roots/list request, got %s", req.raw)
	}
	err, _ := c.close()
	if err == nil || !strings.Contains(err.Error(), "1 requests still running") {
		t.Errorf("Serve = %v, want an error about the request still running", err)
	}
}

func TestNotifications(t *testing.T) {
	var got []Notification
	c := serve(t, &Server{Tools: []Tool{Slow()}, OnNotification: func(n Notification) { got = append(got, n) }})
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":60000}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if _, before := c.response("2"); len(before) != 0 {
		t.Errorf("notifications were answered: %v", before)
	}
	start := time.Now()
	if _, rest := c.close(); len(rest) != 0 {
		t.Errorf("the cancelled call was answered: %v", rest)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("the cancelled call still ran: Serve took %v to return", took)
	}
	want := []Notification{{Method: "notifications/roots/list_changed"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnNotification saw (-want +got):\n%s", diff)
	}
}

func TestParseError(t *testing.T) {
	c := serve(t, &Server{})
	c.send(`{"jsonrpc":`)
	m := c.next()
	if string(m.ID) != "null" || m.Error == nil || m.Error.Code != CodeParseError {
		t.Errorf("after a broken line the server wrote %s, want a parse error with id null", m.raw)
	}
}

func TestConcurrentCallsWriteWholeLines(t *testing.T) {
	c := serve(t, &Server{Tools: []Tool{Echo(), Slow()}})
	const n = 50
	for i := range n {
		c.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"ms":3},"_meta":{"progressToken":%d}}}`, i, i)
	}
	answered := 0
	for answered < n {
		if m := c.next(); m.Method == "" { // next fails the test on a broken line
			answered++
		}
	}
}

func TestWriteLineHook(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	c := serve(t, &Server{WriteLine: func(out io.Writer, line []byte) error {
		mu.Lock()
		lines = append(lines, string(line))
		mu.Unlock()
		_, err := out.Write(line)
		return err
	}})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c.response("1")
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"}, lines); diff != "" {
		t.Errorf("WriteLine saw (-want +got):\n%s", diff)
	}
}

// TestMain runs the test binary as a stdio server when mcptest asks, and
// fails the run if a goroutine of rawmcp or mcptest outlives the tests:
// every Serve, handler and reader started here must have ended.
func TestMain(m *testing.M) {
	mcptest.RunServerIfAsked(stdioServer)
	leakcheck.Main(m, 2*time.Second, "examples/servers/internal/")
}

// ReadLines replaces how stdin is read: every line it passes on is handled,
// and the error that stops it is logged and ends the session as EOF does.
func TestReadLinesHook(t *testing.T) {
	var logged strings.Builder
	var mu sync.Mutex
	errorLog := log.New(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(p)
	}), "", 0)
	srv := &Server{ErrorLog: errorLog, ReadLines: func(in io.Reader, line func([]byte)) error {
		r := bufio.NewReader(in)
		for {
			l, err := r.ReadBytes('\n')
			if len(l) > 0 {
				line(l) // with its '\n': handled all the same
			}
			if err != nil {
				return fmt.Errorf("reader gave up: %w", err)
			}
		}
	}}
	c := serve(t, srv)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if m, _ := c.response("1"); m.Error != nil || string(m.Result) != "{}" {
		t.Errorf("ping through ReadLines answered %s", m.raw)
	}
	if err, rest := c.close(); err != nil || len(rest) != 0 {
		t.Errorf("close: Serve = %v, more output %v; want nil, none", err, rest)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "reading stdin: reader gave up: EOF; shutting down as at EOF"; !strings.Contains(logged.String(), want) {
		t.Errorf("log %q, want it to say %q", logged.String(), want)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// OnBadLine takes over lines that are not JSON-RPC: nothing is answered, and
// the hook sees the line and why it was refused.
func TestOnBadLineHook(t *testing.T) {
	bad := make(chan string, 2)
	c := serve(t, &Server{OnBadLine: func(line []byte, err error) { bad <- fmt.Sprintf("%s: %v", line, err) }})
	c.send(`not json`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if _, before := c.response("1"); len(before) != 0 {
		t.Errorf("the bad line was answered: %v", before)
	}
	select {
	case got := <-bad:
		if want := "not json: invalid character 'o' in literal null (expecting 'u')"; got != want {
			t.Errorf("OnBadLine saw %q, want %q", got, want)
		}
	default:
		t.Error("OnBadLine was not called")
	}
}

// OnInitialized sees every notifications/initialized, repeats included, with
// its params; nothing is answered.
func TestOnInitializedHook(t *testing.T) {
	seen := make(chan string, 2)
	c := serve(t, &Server{OnInitialized: func(params json.RawMessage) { seen <- string(params) }})
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"again":true}}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if _, before := c.response("1"); len(before) != 0 {
		t.Errorf("notifications/initialized was answered: %v", before)
	}
	close(seen)
	var got []string
	for p := range seen {
		got = append(got, p)
	}
	if diff := cmp.Diff([]string{"", `{"_meta":{"again":true}}`}, got); diff != "" {
		t.Errorf("OnInitialized saw (-want +got):\n%s", diff)
	}
}

// OnStrayResponse takes the answers no request waits for: the second copy of
// an answer already delivered, and one to an id never sent. The first copy
// still reaches the request waiting for it.
func TestOnStrayResponseHook(t *testing.T) {
	stray := make(chan string, 4)
	c := serve(t, &Server{Tools: []Tool{rootsTool()}, OnStrayResponse: func(id json.RawMessage, r Response) {
		stray <- fmt.Sprintf("%s %s %v", id, r.Result, r.Err)
	}})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots"}}`)
	req := c.next()
	if req.Method != "roots/list" {
		t.Fatalf("want a roots/list request, got %s", req.raw)
	}
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[]}}`, req.ID)
	c.send("%s", answer)
	if got := string(c.result2("1")); got != `{"content":[{"text":"{\"roots\":[]}","type":"text"}]}` {
		t.Errorf("roots call = %s", got)
	}
	c.send("%s", answer)
	c.send(`{"jsonrpc":"2.0","id":"never","error":{"code":-32601,"message":"no"}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if _, before := c.response("2"); len(before) != 0 {
		t.Errorf("the stray answers were answered: %v", before)
	}
	close(stray)
	var got []string
	for s := range stray {
		got = append(got, s)
	}
	want := []string{string(req.ID) + ` {"roots":[]} <nil>`, `"never"  JSON-RPC error -32601: no`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnStrayResponse saw (-want +got):\n%s", diff)
	}
}
