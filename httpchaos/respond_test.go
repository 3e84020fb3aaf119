package httpchaos_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// httpEvents lists the transcript's HTTP events as "STATUS DETAIL" (status
// 0 for a request line or a note).
func httpEvents(events []wire.Event, keep func(wire.Event) bool) []wire.Event {
	var out []wire.Event
	for _, e := range events {
		if e.Type == wire.EventHTTP && keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// http-error answers the call in the server's place: the client gets the
// status, the server never sees the call, and the status answers the
// request in the record, so the judge holds nobody to an answer.
func TestHTTPErrorAnswersInTheServersPlace(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusNotFound} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			r := startRig(t, 1, "http-error:on=c2s:request:tools/call,status="+itoa(status))
			c := r.dial(t, mcp.ProtocolVersion20251125)
			_, err := call(c, 3*time.Second, "echo", map[string]any{"text": "hi"}, nil)
			// mcp-go's client reads the body's error (503), or takes the
			// 404 for its session's end.
			if err == nil || !strings.Contains(err.Error(), itoa(status)) && !strings.Contains(err.Error(), http.StatusText(status)) {
				t.Fatalf("the call through http-error returned %v; want an error naming HTTP %d", err, status)
			}
			c.Close()
			v := r.end(t)
			events := r.rec.Events()
			injected := httpEvents(events, func(e wire.Event) bool { return e.Fault != "" })
			if len(injected) != 1 || injected[0].Status != status || injected[0].Of == 0 {
				t.Fatalf("want one HTTP %d answered by the fault, naming its request; got %+v", status, injected)
			}
			if got := r.kindOf(injected[0].Of); got != "request" {
				t.Errorf("the status answers seq %d, a %s; want the tool call", injected[0].Of, got)
			}
			var dropped int
			for _, e := range events {
				if e.Type == wire.EventDropped && e.Of == injected[0].Of {
					dropped++
				}
			}
			if dropped != 1 {
				t.Errorf("the faulted call is recorded dropped %d times; want once (it never reached the server)", dropped)
			}
			if len(v.Findings) != 0 {
				t.Errorf("findings on a well-behaved server: %+v", v.Findings)
			}
		})
	}
}

// reset resets the client's connection: the client reads a reset, not an
// answer, and before forwarding the server never gets the call.
func TestResetResetsTheConnection(t *testing.T) {
	r := startRig(t, 1, "reset:on=c2s:request:tools/call")
	c := r.dial(t, mcp.ProtocolVersion20251125)
	_, err := call(c, 3*time.Second, "echo", map[string]any{"text": "hi"}, nil)
	if err == nil {
		t.Fatal("the call through reset succeeded")
	}
	t.Logf("the client saw: %v", err)
	if !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("the client's error %q names neither a reset nor an EOF", err)
	}
	c.Close()
	r.end(t)
	got := httpEvents(r.rec.Events(), func(e wire.Event) bool { return strings.Contains(e.Detail, "by fault reset#1") })
	if len(got) != 1 || got[0].Detail != "connection reset by fault reset#1" {
		t.Errorf("want the reset recorded once; got %+v", got)
	}
}

// end-session sends the server the DELETE the client would: with
// position=before, the call meets the ended session and the server's own
// 404 answers it (mcp-go's stateful session manager; its default one
// forgets nothing and serves an ended session on).
func TestEndSessionDeletesTheSession(t *testing.T) {
	r := startRigWith(t, []server.StreamableHTTPOption{server.WithStateful(true)}, 1, "end-session:on=c2s:request:tools/call,position=before")
	c := r.dial(t, mcp.ProtocolVersion20251125)
	_, err := call(c, 3*time.Second, "echo", map[string]any{"text": "hi"}, nil)
	t.Logf("the call after the session ended: %v", err)
	c.Close()
	v := r.end(t)
	events := r.rec.Events()
	var lines []string
	for _, e := range httpEvents(events, func(e wire.Event) bool { return e.Fault != "" }) {
		lines = append(lines, e.HTTP)
	}
	if diff := cmp.Diff([]string{"DELETE /mcp (sent by fault end-session#1)"}, lines); diff != "" {
		t.Errorf("DELETE exchanges (-want +got):\n%s", diff)
	}
	var deleteAnswered, callRefused bool
	for _, e := range events {
		if e.Type == wire.EventHTTP && strings.HasPrefix(e.Detail, "the server answered the session's DELETE with 2") {
			deleteAnswered = true
		}
		if e.Type == wire.EventHTTP && e.Status == http.StatusNotFound && e.Of != 0 && r.kindOf(e.Of) == "request" {
			callRefused = true
		}
	}
	if !deleteAnswered || !callRefused {
		t.Errorf("want the DELETE answered 2xx (%v) and the call then refused 404 by the server (%v)", deleteAnswered, callRefused)
	}
	if err == nil {
		t.Errorf("the call on the ended session succeeded")
	}
	if len(v.Findings) != 0 {
		t.Errorf("findings on a well-behaved server: %+v", v.Findings)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A 202 Accepted that names a JSON content type and has no body (how the
// Python SDK's server answers a notification in the stateful era) carries
// no message: recording one made the judge call the empty body a protocol
// violation.
func TestEmptyJSONAcceptedIsNoMessage(t *testing.T) {
	front, p, rec := proxyTo(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
	}), "/mcp")
	resp, err := http.Post(front, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("status %d, want 202 passed on", resp.StatusCode)
	}
	p.Close("the test ended")
	for _, e := range rec.Events() {
		if e.Type == wire.EventReceived && e.Dir == "s2c" {
			t.Errorf("an empty body recorded as a message: %+v", e)
		}
	}
	if v := judge.Session(rec.Events()); len(v.Findings) != 0 {
		t.Errorf("findings: %+v", v.Findings)
	}
}

// The Host a client sends reaches the server when it is not the proxy's
// own address (a DNS-rebinding probe's forged host must be seen to be
// refused: the conformance suite checks it); the proxy's own address
// becomes the upstream's, as in any reverse proxy.
func TestHostPassesUnlessItNamesTheProxy(t *testing.T) {
	hosts := make(chan string, 2)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hosts <- r.Host
		w.WriteHeader(http.StatusAccepted)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	front, _, _ := proxyToURL(t, u)
	for _, tc := range []struct{ sent, want string }{
		{"", u.Host},
		{"evil.example.com", "evil.example.com"},
	} {
		req, _ := http.NewRequest(http.MethodPost, front, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		if tc.sent != "" {
			req.Host = tc.sent
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := <-hosts; got != tc.want {
			t.Errorf("Host %q sent: the server saw %q, want %q", tc.sent, got, tc.want)
		}
	}
}
