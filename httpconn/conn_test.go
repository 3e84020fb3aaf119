package httpconn_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/httpconn"
	"github.com/mcpchaos/mcpchaos/internal/leakcheck"
	"github.com/mcpchaos/mcpchaos/internal/ssetest"
	"github.com/mcpchaos/mcpchaos/probe"
)

func TestMain(m *testing.M) {
	leakcheck.Main(m, 5*time.Second, "mcpchaos/httpconn.", "github.com/mark3labs/mcp-go")
}

func dial(t *testing.T, rawURL string, h http.Header) *httpconn.Conn {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := httpconn.Dial(httpconn.Config{URL: u, Header: h})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The probe client, which speaks line-delimited JSON-RPC, drives mcp-go's
// streamable HTTP server in both eras and its legacy HTTP+SSE server
// through a Conn as it drives a stdio server: every tool answered.
func TestProbeOverHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(everything.New()))
	front := httptest.NewUnstartedServer(mux)
	front.Start()
	sse := server.NewSSEServer(everything.New(), server.WithBaseURL(front.URL))
	mux.Handle("/sse", sse.SSEHandler())
	mux.Handle("/message", sse.MessageHandler())
	defer front.Close()
	defer sse.Shutdown(context.Background())
	for _, tc := range []struct {
		name, path, era, wantEra string
	}{
		{"streamable HTTP, stateless", "/mcp", "", probe.EraStateless},
		{"streamable HTTP, handshake", "/mcp", probe.EraStateful, probe.EraStateful},
		{"legacy HTTP+SSE", "/sse", probe.EraStateful, probe.EraStateful},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, front.URL+tc.path, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := probe.Run(ctx, probe.Config{Era: tc.era, Deadline: 5 * time.Second}, c.Reader(), c.Writer())
			if err != nil {
				t.Fatalf("probe: %v", err)
			}
			if out.Era != tc.wantEra || len(out.Tools) == 0 {
				t.Errorf("era %q, tools %v", out.Era, out.Tools)
			}
			for _, r := range out.Requests {
				// What was sent to be refused must be answered too, with
				// an error.
				if !r.Answered || (r.Error != "" && r.Deliberate == "") {
					t.Errorf("%s %s: answered %v, error %q", r.Method, r.Tool, r.Answered, r.Error)
				}
			}
		})
	}
}

// script is a scripted streamable HTTP server: each POST is answered by
// the test's handler for its body's method.
type script struct {
	mu       sync.Mutex
	requests []string // "METHOD path headers..." as they came
}

func (s *script) log(r *http.Request, extra string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer t" {
		// Config.Header goes with every request (test --url --header).
		extra += " without the token"
	}
	s.requests = append(s.requests, strings.TrimSpace(r.Method+" "+extra))
}

// readLines reads n lines from r, or fails after a while.
func readLines(t *testing.T, r io.Reader, n int) []string {
	t.Helper()
	got := make(chan []string, 1)
	go func() {
		var lines []string
		sc := bufio.NewScanner(r)
		for len(lines) < n && sc.Scan() {
			lines = append(lines, sc.Text())
		}
		got <- lines
	}()
	select {
	case lines := <-got:
		return lines
	case <-time.After(10 * time.Second):
		t.Fatalf("fewer than %d lines came", n)
		return nil
	}
}

func TestScriptedResponses(t *testing.T) {
	s := &script{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			s.log(r, "session="+r.Header.Get("Mcp-Session-Id"))
			return
		case http.MethodGet:
			s.log(r, "last-event-id="+r.Header.Get("Last-Event-ID"))
			if r.Header.Get("Last-Event-ID") == "" {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			// The replay of what the cut stream did not deliver.
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n")
			return
		}
		body, _ := io.ReadAll(r.Body)
		method := between(string(body), `"method":"`, `"`)
		s.log(r, method+" session="+r.Header.Get("Mcp-Session-Id")+" version="+r.Header.Get("MCP-Protocol-Version"))
		switch method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s-1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/list":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `[{"jsonrpc":"2.0","method":"notifications/message","params":{}},`+"\n"+`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]`)
		case "tools/call":
			// A progress event with an id, then the stream is cut
			// before the result: the client resumes from id 1.
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "retry: 10\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		case "ping":
			http.Error(w, "upstream exploded\nTraceback ...", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	c := dial(t, srv.URL+"/mcp", http.Header{"Authorization": {"Bearer t"}})
	w := c.Writer()
	send := func(msg string) {
		if _, err := io.WriteString(w, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	got := readLines(t, c.Reader(), 1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	got = append(got, readLines(t, c.Reader(), 2)...)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`)
	got = append(got, readLines(t, c.Reader(), 2)...)
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	got = append(got, readLines(t, c.Reader(), 1)...)
	w.Close()
	rest, _ := io.ReadAll(c.Reader()) // EOF once the POSTs in flight are done
	c.Reader().Close()
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"HTTP 500 Internal Server Error: upstream exploded Traceback ..."}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if len(rest) != 0 {
		t.Errorf("after the close: %q", rest)
	}
	s.mu.Lock()
	requests := slices.Clone(s.requests)
	s.mu.Unlock()
	// The GET stream opens after initialized; its 405 is not retried.
	slices.Sort(requests)
	wantRequests := []string{
		"DELETE session=s-1",
		"GET last-event-id=",
		"GET last-event-id=1",
		"POST initialize session= version=",
		"POST notifications/initialized session=s-1 version=2025-11-25",
		"POST ping session=s-1 version=2025-11-25",
		"POST tools/call session=s-1 version=2025-11-25",
		"POST tools/list session=s-1 version=2025-11-25",
	}
	if diff := cmp.Diff(wantRequests, requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, to)
	return v
}

func TestDialRefusesABadURL(t *testing.T) {
	for _, raw := range []string{"ftp://x/mcp", "/mcp"} {
		u, _ := url.Parse(raw)
		if _, err := httpconn.Dial(httpconn.Config{URL: u}); err == nil {
			t.Errorf("Dial(%s) succeeded", raw)
		}
	}
	if _, err := httpconn.Dial(httpconn.Config{}); err == nil {
		t.Error("Dial without a URL succeeded")
	}
}

// A legacy URL whose GET is not an event stream (the TypeScript SDK's
// simpleSseServer serves its stream at /mcp, and Express answers /sse with
// a 404 page): the calls fail with what the GET got, not only that no
// endpoint came.
func TestALegacyStreamThatIsNotOneSaysWhatItGot(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "<pre>Cannot GET /sse</pre>")
	}))
	defer srv.Close()
	c := dial(t, srv.URL+"/sse", nil)
	if _, err := io.WriteString(c.Writer(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	got := readLines(t, c.Reader(), 1)
	c.Writer().Close()
	c.Reader().Close()
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"HTTP: the legacy transport's stream named no endpoint to POST to: GET /sse answered 404 Not Found (text/html; charset=utf-8), not an event stream: is this the server's SSE endpoint?"}}`
	if diff := cmp.Diff([]string{want}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The initialized notification's POST completes before the next message is
// posted: FastMCP of mcp 1.3.0 ends a session whose request arrives before
// that notification ("Received request before initialization was
// complete"), and a probe that posted tools/list alongside it made every
// baseline over the legacy transport a hang, which no SDK client causes.
func TestInitializedIsPostedBeforeWhatFollows(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), "notifications/initialized"):
			note("initialized arrives")
			time.Sleep(200 * time.Millisecond) // a server slow to take it in
			note("initialized accepted")
			w.WriteHeader(http.StatusAccepted)
		case strings.Contains(string(body), "tools/list"):
			note("tools/list arrives")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
		default:
			// The GET stream the notification opens: none here.
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	defer front.Close()
	c := dial(t, front.URL+"/mcp", nil)
	if _, err := io.WriteString(c.Writer(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c.Reader()).ReadString('\n')
	if err != nil || !strings.Contains(line, `"tools"`) {
		t.Fatalf("answer %q, %v", line, err)
	}
	c.Writer().Close()
	c.Reader().Close()
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"initialized arrives", "initialized accepted", "tools/list arrives"}, order); diff != "" {
		t.Errorf("order at the server (-want +got):\n%s", diff)
	}
}

// On the legacy transport a server's messages all come on its stream: a
// POST's body is not read as one, though a server may echo its answer
// there (mcp-go 0.20 did), which would reach the client twice.
func TestLegacyPOSTBodyIsNotDelivered(t *testing.T) {
	front := httptest.NewServer(ssetest.EchoingServer())
	defer front.Close()
	c := dial(t, front.URL+"/sse", nil)
	lines := streamLines(c.Reader())
	if _, err := io.WriteString(c.Writer(), `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lines:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	select {
	case l := <-lines:
		t.Errorf("the answer reached the client twice: %q", l)
	case <-time.After(300 * time.Millisecond): // a second copy would come at once
	}
	c.Writer().Close()
	c.Reader().Close()
	for range lines {
	}
}

// On the legacy transport the client's close cannot end the stream at once:
// answers to what it sent still come on it. Once none is owed the stream is
// closed, as an SDK client closes it when its session ends; left open until
// the server is stopped, it held FastMCP (mcp 1.6.0) up, and the 2 s the
// probe then waited for the output to end was spent on every scenario.
func TestLegacyStreamClosesOnceNothingIsOwed(t *testing.T) {
	hungUp := make(chan struct{})
	answers := make(chan string, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", ssetest.Stream("/message", answers, func() { close(hungUp) }))
	mux.HandleFunc("/message", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	lines := callAndClose(t, mux)
	select {
	case l, ok := <-lines:
		t.Fatalf("with an answer owed the client's output gave %q (ok %v); want it open", l, ok)
	case <-hungUp:
		t.Fatal("the stream was closed with an answer owed")
	case <-time.After(300 * time.Millisecond):
	}
	answers <- `{"jsonrpc":"2.0","id":1,"result":{}}`
	if l := <-lines; !strings.Contains(l, `"id":1`) {
		t.Errorf("got %q, want the answer", l)
	}
	select {
	case <-hungUp:
	case <-time.After(2 * time.Second):
		t.Fatal("the stream stayed open with nothing owed")
	}
	wantEnd(t, lines, "with nothing owed")
}

// callAndClose serves mux, sends a tools/list (id 1) through a Conn on its
// legacy endpoint and closes the Conn's writer, as the probe ends its
// session; it returns the lines the Conn's reader gives.
func callAndClose(t *testing.T, mux *http.ServeMux) <-chan string {
	t.Helper()
	front := httptest.NewServer(mux)
	t.Cleanup(front.Close)
	c := dial(t, front.URL+"/sse", nil)
	t.Cleanup(func() { c.Reader().Close() })
	lines := streamLines(c.Reader())
	if _, err := io.WriteString(c.Writer(), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	c.Writer().Close()
	return lines
}

// streamLines sends each line read from r, and closes the channel at its end.
func streamLines(r io.Reader) <-chan string {
	lines := make(chan string, 4)
	go func() {
		defer close(lines)
		br := bufio.NewReader(r)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			lines <- l
		}
	}()
	return lines
}

// A legacy stream the server ends with an answer still owed can bring
// nothing more: the client's output ends with it, instead of waiting for
// the reader to give up.
func TestLegacyStreamEndedByTheServerEndsTheOutput(t *testing.T) {
	msgs := make(chan string)
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", ssetest.Stream("/message", msgs, nil))
	mux.HandleFunc("/message", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	lines := callAndClose(t, mux)
	close(msgs) // the server drops the stream, the call unanswered
	wantEnd(t, lines, "with the server's stream")
}

// wantEnd fails t unless the client's output, lines, ends within 2 s with
// nothing more on it; when says when it should have.
func wantEnd(t *testing.T, lines <-chan string, when string) {
	t.Helper()
	select {
	case l, ok := <-lines:
		if ok {
			t.Errorf("the client's output gave %q; want its end %s", l, when)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("the client's output did not end %s", when)
	}
}
