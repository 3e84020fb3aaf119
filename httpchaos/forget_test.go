package httpchaos_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/wire"
)

// sessionKeeper is a scripted stateful server: initialize issues the next
// of its ids, a request under an id it issued is answered, any other id
// gets 404 (or echoServed: is served, with the id echoed, as a server that
// checks nothing would). It records the session id of every request.
type sessionKeeper struct {
	echoServed bool

	mu     sync.Mutex
	issued map[string]bool
	seen   []string
}

func (k *sessionKeeper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	sid := r.Header.Get("Mcp-Session-Id")
	k.mu.Lock()
	k.seen = append(k.seen, sid)
	if k.issued == nil {
		k.issued = map[string]bool{}
	}
	known := k.issued[sid]
	if strings.Contains(string(body), `"initialize"`) && sid == "" {
		sid = fmt.Sprintf("0b1c2d3e-4f50-4a1b-9c2d-3e4f5a6b7c%02d", len(k.issued))
		k.issued[sid] = true
		known = true
	}
	k.mu.Unlock()
	if !known && !k.echoServed {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)
		return
	}
	w.Header().Set("Mcp-Session-Id", sid)
	if !strings.Contains(string(body), `"id"`) {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
}

func (k *sessionKeeper) sessions() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.seen...)
}

// post sends one message under session sid and returns the status and the
// session id the answer named.
func postAs(t *testing.T, front, sid, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, front, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	c := http.Client{Timeout: testTimeout}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

const (
	initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	toolCall   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	toolList   = `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`
)

// From the tool call on, the server is shown an id it never issued in
// place of the client's, and keeps being shown it for the client's
// retries, as a restarted server would; a new session passes untouched.
func TestForgetSessionForgetsForGood(t *testing.T) {
	k := &sessionKeeper{}
	front, p, rec := proxyTo(t, k, "/mcp", "forget-session")
	status, old := postAs(t, front, "", initialize)
	if status != http.StatusOK || old == "" {
		t.Fatalf("initialize: %d, session %q", status, old)
	}
	if s, _ := postAs(t, front, old, toolList); s != http.StatusOK {
		t.Fatalf("tools/list before the fault: %d", s)
	}
	if s, _ := postAs(t, front, old, toolCall); s != http.StatusNotFound {
		t.Errorf("the tool call that fired the fault: %d, want the server's 404", s)
	}
	if s, _ := postAs(t, front, old, toolList); s != http.StatusNotFound {
		t.Errorf("a retry under the old id: %d, want 404 again: the session stays forgotten", s)
	}
	status, renewed := postAs(t, front, "", initialize)
	if status != http.StatusOK || renewed == "" || renewed == old {
		t.Fatalf("a new initialize: %d, session %q", status, renewed)
	}
	if s, _ := postAs(t, front, renewed, toolCall); s != http.StatusOK {
		t.Errorf("a tool call in the new session: %d, want it served", s)
	}
	p.Close("the test ended")

	seen := k.sessions()
	forged := seen[2]
	if forged == old || len(forged) != len(old) || forged[14] != '4' {
		t.Errorf("the server saw %q in place of %q: want an id of the same shape (a UUID, version 4), not the client's", forged, old)
	}
	if diff := cmp.Diff([]string{"", old, forged, forged, "", renewed}, seen); diff != "" {
		t.Errorf("session ids the server saw (-want +got):\n%s", diff)
	}
	var fired, sent []string
	for _, e := range rec.Events() {
		if e.Type == wire.EventFault && e.Action == "forget-session" {
			fired = append(fired, e.Detail)
			if e.MCPSession != old {
				t.Errorf("the fault event names session %q, want the client's %q", e.MCPSession, old)
			}
		}
		if e.Type == wire.EventHTTP && e.Action == "forget-session" {
			sent = append(sent, e.MCPSession)
		}
	}
	if len(fired) != 1 || !strings.Contains(fired[0], old) || !strings.Contains(fired[0], forged) {
		t.Errorf("fault events %q: want one, naming both ids", fired)
	}
	if diff := cmp.Diff([]string{forged, forged}, sent); diff != "" {
		t.Errorf("exchanges recorded as sent under the forged id (-want +got):\n%s", diff)
	}
}

// A server that serves any id and echoes it in its answer must not teach
// the client the forged id: the client is given back its own.
func TestForgetSessionHidesTheForgedIDFromTheClient(t *testing.T) {
	k := &sessionKeeper{echoServed: true}
	front, _, _ := proxyTo(t, k, "/mcp", "forget-session")
	_, old := postAs(t, front, "", initialize)
	status, named := postAs(t, front, old, toolCall)
	if status != http.StatusOK {
		t.Fatalf("the call: %d, want it served", status)
	}
	if named != old {
		t.Errorf("the answer named session %q, want the client's own %q (the server echoed the forged id)", named, old)
	}
	if seen := k.sessions(); seen[len(seen)-1] == old {
		t.Errorf("the server saw the client's own id %q", old)
	}
}

// A request without a session id (a stateless server's session) has no
// session to forget: skipped, and said so.
func TestForgetSessionSkipsWithoutASessionID(t *testing.T) {
	k := &sessionKeeper{echoServed: true}
	front, p, rec := proxyTo(t, k, "/mcp", "forget-session")
	postAs(t, front, "", toolCall)
	p.Close("the test ended")
	var details []string
	for _, e := range rec.Events() {
		if e.Type == wire.EventFault {
			details = append(details, e.Detail)
		}
	}
	if len(details) != 1 || !strings.HasPrefix(details[0], "skipped: the request carries no Mcp-Session-Id") {
		t.Errorf("fault events %q: want one, skipped for want of a session id", details)
	}
}

// Against mcp-go's stateful session manager and client: the server
// answers the forgotten session 404, the client's call fails with its
// "session terminated" error, and the judge finds nothing wrong with the
// server.
func TestForgetSessionOnMCPGo(t *testing.T) {
	r := startRigWith(t, []server.StreamableHTTPOption{server.WithStateful(true)}, 1, "forget-session")
	c := r.dial(t, mcp.ProtocolVersion20251125)
	_, err := call(c, 3*time.Second, "echo", map[string]any{"text": "hi"}, nil)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("the call in the forgotten session returned %v; want mcp-go's error for a 404", err)
	}
	c.Close()
	v := r.end(t)
	var refused bool
	for _, e := range r.rec.Events() {
		if e.Type == wire.EventHTTP && e.Status == http.StatusNotFound && e.Of != 0 && r.kindOf(e.Of) == "request" {
			refused = true
		}
	}
	if !refused {
		t.Error("no request was answered 404 by the server")
	}
	if len(v.Findings) != 0 {
		t.Errorf("findings on a well-behaved server: %+v", v.Findings)
	}
}
