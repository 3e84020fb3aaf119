package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestOneSessionIsClean is a client alone: current is its own session, so
// both twins answer everything right.
func TestOneSessionIsClean(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		t.Run(twin(fixed), func(t *testing.T) {
			h := start(t, fixed, echoTakes)
			ctx := h.ctx
			a := h.open(ctx, "A")

			wantCaps := map[string]any{"tools": map[string]any{}, "logging": map[string]any{}}
			if diff := cmp.Diff(wantCaps, a.init["capabilities"]); diff != "" {
				t.Errorf("initialize's capabilities (-want +got):\n%s", diff)
			}
			for _, tc := range []struct {
				method string
				params any
				want   string
			}{
				{"ping", nil, `{"result":{}}`},
				{"logging/setLevel", map[string]any{"level": "info"}, `{"result":{}}`},
				{"logging/setLevel", map[string]any{"level": "loud"}, `{"error":{"code":-32602,"message":"Invalid params: unknown level"}}`},
				{"prompts/list", nil, `{"error":{"code":-32601,"message":"Method not found"}}`},
			} {
				var got, want map[string]any
				if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
					t.Fatal(err)
				}
				got = a.roundTrip(ctx, tc.method, tc.params)
				delete(got, "jsonrpc")
				delete(got, "id")
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s %v (-want +got):\n%s", tc.method, tc.params, diff)
				}
			}
			if tools := a.roundTrip(ctx, "tools/list", nil); !strings.Contains(fmt.Sprint(tools), "name:echo") || !strings.Contains(fmt.Sprint(tools), "name:slow") {
				t.Errorf("tools/list = %v, want echo and slow", tools)
			}

			for _, tc := range []struct {
				name  string
				args  map[string]any
				quiet bool // after logging/setLevel warning
				want  seen
			}{
				{"echo", map[string]any{"text": "hi"}, false, seen{Progress: []string{"tok"}, Logs: []string{"echo hi"}, Results: []string{"hi"}, Ended: true}},
				{"slow", map[string]any{"ms": 50}, false, seen{Progress: []string{"tok"}, Logs: []string{"slow "}, Results: []string{"done"}, Ended: true}},
				{"echo", map[string]any{"text": "hush"}, true, seen{Progress: []string{"tok"}, Results: []string{"hush"}, Ended: true}},
			} {
				if tc.quiet {
					a.roundTrip(ctx, "logging/setLevel", map[string]any{"level": "warning"})
				}
				ev := a.call(ctx, tc.name, tc.args, "tok")
				if diff := cmp.Diff(tc.want, ev.gather(2*time.Second)); diff != "" {
					t.Errorf("tools/call %s %v (-want +got):\n%s", tc.name, tc.args, diff)
				}
			}

			if got := a.end(ctx); got != http.StatusOK {
				t.Errorf("DELETE: %d, want 200", got)
			}
			if got := a.end(ctx); got != http.StatusNotFound {
				t.Errorf("DELETE of an ended session: %d, want 404", got)
			}
			resp, err := a.post(ctx, map[string]any{"jsonrpc": "2.0", "id": 99, "method": "ping"})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("ping in an ended session: %d, want 404", resp.StatusCode)
			}
		})
	}
}

// TestTwoSessionsSameID is the planted bug: sessions A and B (B
// initialized last) both call echo with request id 2, A's call first and
// B's while A's runs. The fixed twin answers each on its own stream. The
// buggy one sends A's progress, log and result down B's stream, B takes
// A's text for its own answer, B's own messages find no stream and are
// dropped, and A's POST gets nothing: it is held until its session ends.
func TestTwoSessionsSameID(t *testing.T) {
	// echo works 300ms and B calls 100ms after A's stream opened: A's
	// messages leave with B's stream open and before B's own, with margins
	// no scheduler hiccup eats.
	const echo, stagger = 300 * time.Millisecond, 100 * time.Millisecond
	own := func(who string) seen {
		return seen{Progress: []string{"tok-" + who}, Logs: []string{"echo from-" + who}, Results: []string{"from-" + who}, Ended: true}
	}
	for _, tc := range []struct {
		fixed     bool
		wantA     seen // within 1s of the call
		wantB     seen
		wantDrops int  // messages logged as dropped
		heldA     bool // A's POST held until A's session ends
	}{
		{fixed: true, wantA: own("A"), wantB: own("B")},
		{fixed: false, wantA: seen{}, wantB: own("A"), wantDrops: 3, heldA: true},
	} {
		t.Run(twin(tc.fixed), func(t *testing.T) {
			logs := captureLog(t)
			h := start(t, tc.fixed, echo)
			ctx := h.ctx
			a := h.open(ctx, "A")
			b := h.open(ctx, "B")

			// call returns once the stream's head came: A's call is
			// running at the server when B's is sent.
			evA := a.call(ctx, "echo", map[string]any{"text": "from-A"}, "tok-A")
			time.Sleep(stagger)
			evB := b.call(ctx, "echo", map[string]any{"text": "from-B"}, "tok-B")

			gotB := evB.gather(2 * time.Second)
			gotA := evA.gather(time.Second)
			if diff := cmp.Diff(tc.wantA, gotA); diff != "" {
				t.Errorf("session A's stream (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantB, gotB); diff != "" {
				t.Errorf("session B's stream (-want +got):\n%s", diff)
			}
			// By now B's own call is over too: its messages found B's
			// stream answered already.
			if got := strings.Count(logs.String(), "dropped a message of request 2"); got != tc.wantDrops {
				t.Errorf("%d messages dropped, want %d; log:\n%s", got, tc.wantDrops, logs.String())
			}

			for _, s := range []*client{a, b} {
				if got := s.end(ctx); got != http.StatusOK {
					t.Errorf("DELETE of session %s: %d, want 200", s.name, got)
				}
			}
			if tc.heldA {
				// Not held for ever: the session's end lets the POST go.
				if diff := cmp.Diff(seen{Ended: true}, evA.gather(2*time.Second)); diff != "" {
					t.Errorf("session A's stream after its DELETE (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func twin(fixed bool) string {
	if fixed {
		return "fixed"
	}
	return "buggy"
}

// harness is the example served in-process, with the HTTP client of a test.
type harness struct {
	t    *testing.T
	ctx  context.Context // every request's: no read outlives it
	url  string
	http *http.Client
}

// start serves the example for the test. It checks that the test leaves no
// goroutine behind: the test's context ends first, which lets the held
// POSTs go, then the server and the client's connections close.
func start(t *testing.T, fixed bool, echo time.Duration) *harness {
	t.Helper()
	checkNoGoroutineLeak(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler(fixed, echo))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return &harness{t: t, ctx: ctx, url: srv.URL + "/mcp", http: &http.Client{Transport: tr}}
}

// client is one MCP session.
type client struct {
	h    *harness
	t    *testing.T
	name string
	sid  string
	init map[string]any // initialize's result
	next int            // the next request id
}

// open opens a session: initialize (id 1), then notifications/initialized.
func (h *harness) open(ctx context.Context, name string) *client {
	c := &client{h: h, t: h.t, name: name, next: 1}
	c.t.Helper()
	resp, err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "id": c.id(), "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "client-" + name, "version": "1"}}})
	if err != nil {
		c.t.Fatal(err)
	}
	c.sid = resp.Header.Get("Mcp-Session-Id")
	answer := c.decode(resp)
	if c.sid == "" {
		c.t.Fatalf("initialize of %s: no Mcp-Session-Id; answer %v", name, answer)
	}
	c.init, _ = answer["result"].(map[string]any)
	resp, err = c.post(ctx, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized of %s: %d, want 202", name, resp.StatusCode)
	}
	return c
}

func (c *client) id() int {
	id := c.next
	c.next++
	return id
}

func (c *client) post(ctx context.Context, msg any) (*http.Response, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	return c.h.http.Do(req)
}

// decode reads a JSON answer.
func (c *client) decode(resp *http.Response) map[string]any {
	c.t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("%s: %v in %q", resp.Request.URL, err, body)
	}
	return m
}

// roundTrip sends a request answered as JSON and returns the answer.
func (c *client) roundTrip(ctx context.Context, method string, params any) map[string]any {
	c.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": c.id(), "method": method}
	if params != nil {
		msg["params"] = params
	}
	resp, err := c.post(ctx, msg)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.decode(resp)
}

// call sends tools/call under the session's next id (2 for the first call
// after open) and returns its SSE stream once its head came.
func (c *client) call(ctx context.Context, tool string, args map[string]any, token string) *events {
	c.t.Helper()
	// The stream's context ends when the test does, or when its reader
	// is done with it: its body is closed with it.
	ctx, cancel := context.WithCancel(ctx)
	c.t.Cleanup(cancel)
	resp, err := c.post(ctx, map[string]any{"jsonrpc": "2.0", "id": c.id(), "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": args, "_meta": map[string]any{"progressToken": token}}})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		c.t.Fatalf("tools/call in session %s: %d %s, want 200 text/event-stream", c.name, resp.StatusCode, ct)
	}
	return readEvents(ctx, resp.Body)
}

// end ends the session (DELETE) and returns the status.
func (c *client) end(ctx context.Context) int {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.h.url, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", c.sid)
	resp, err := c.h.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// events are the messages of an SSE stream, read as they come.
type events struct {
	ch    chan json.RawMessage // closed when the stream ends
	ended bool
}

// readEvents reads the stream until it ends or ctx does.
func readEvents(ctx context.Context, body io.Reader) *events {
	e := &events{ch: make(chan json.RawMessage)}
	go func() {
		defer close(e.ch)
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			select {
			case e.ch <- json.RawMessage(data):
			case <-ctx.Done():
				return
			}
		}
	}()
	return e
}

// seen is what a call's stream carried.
type seen struct {
	Progress []string // the progress tokens
	Logs     []string // each log line's tool and text argument
	Results  []string // each result's text
	Other    []string // any other message
	Ended    bool     // the stream ended: its POST returned
}

// gather reads the stream for at most within, or until it ends.
func (e *events) gather(within time.Duration) seen {
	var s seen
	timer := time.NewTimer(within)
	defer timer.Stop()
	for !e.ended {
		select {
		case raw, ok := <-e.ch:
			if !ok {
				e.ended = true
				break
			}
			s.add(raw)
		case <-timer.C:
			return s
		}
	}
	s.Ended = true
	return s
}

func (s *seen) add(raw json.RawMessage) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProgressToken string `json:"progressToken"`
			Data          struct {
				Tool      string `json:"tool"`
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"data"`
		} `json:"params"`
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	switch {
	case json.Unmarshal(raw, &m) != nil:
		s.Other = append(s.Other, string(raw))
	case m.Method == "notifications/progress":
		s.Progress = append(s.Progress, m.Params.ProgressToken)
	case m.Method == "notifications/message":
		s.Logs = append(s.Logs, m.Params.Data.Tool+" "+m.Params.Data.Arguments.Text)
	case m.Result != nil && len(m.Result.Content) == 1:
		s.Results = append(s.Results, m.Result.Content[0].Text)
	default:
		s.Other = append(s.Other, string(raw))
	}
}

// captureLog collects what the server logs for the test.
func captureLog(t *testing.T) *syncBuffer {
	b := &syncBuffer{}
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(b)
	log.SetFlags(0)
	t.Cleanup(func() {
		log.SetOutput(out)
		log.SetFlags(flags)
	})
	return b
}

// syncBuffer is a buffer the server's goroutines write while the test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// checkNoGoroutineLeak fails the test if goroutines started during it are
// still running once it ends. It is registered first, so that it runs after
// the cleanups that stop the server and the client.
func checkNoGoroutineLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines leaked:\n%s", n-before, buf[:runtime.Stack(buf, true)])
		}
	})
}
