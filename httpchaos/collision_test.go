package httpchaos_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// heldCalls is a streamable HTTP server of the stateful revision, as an SDK
// of it serves: it refuses server/discover with 400 (no session), and
// holds each tools/call until the test releases its tool (arguments
// {"tool": NAME}), then answers it on its own POST with the tool's name.
// A refuse hook may answer a held call with an error status instead.
type heldCalls struct {
	mu      sync.Mutex
	changed *sync.Cond
	held    map[string]int // by id: the calls held under it now
	release map[string]chan int
	done    chan struct{} // closed when the test ends: every call is answered
}

// serveHeldCalls serves the server behind a proxy with a plan of specs; the
// calls it still holds when the test ends are answered 200, so that a
// failing test ends.
func serveHeldCalls(t *testing.T, specs ...string) (h *heldCalls, front string, p *httpchaos.Proxy, rec *chaos.MemoryRecorder) {
	h = &heldCalls{held: map[string]int{}, release: map[string]chan int{}, done: make(chan struct{})}
	h.changed = sync.NewCond(&h.mu)
	front, p, rec = proxyTo(t, h, "/mcp", specs...)
	t.Cleanup(func() { close(h.done) }) // before the servers close
	return h, front, p, rec
}

// gate is the channel that releases tool's calls, with the status to answer
// (200 for the result).
func (h *heldCalls) gate(tool string) chan int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release[tool] == nil {
		h.release[tool] = make(chan int, 1)
	}
	return h.release[tool]
}

// waitHeld waits until n calls are held under id.
func (h *heldCalls) waitHeld(t *testing.T, id string, n int) {
	t.Helper()
	deadline := time.AfterFunc(testTimeout, func() { h.mu.Lock(); h.changed.Broadcast(); h.mu.Unlock() })
	defer deadline.Stop()
	start := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.held[id] < n {
		if time.Since(start) > testTimeout {
			t.Fatalf("the server holds %d calls under id %s; want %d", h.held[id], id, n)
		}
		h.changed.Wait()
	}
}

func (h *heldCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Arguments struct {
				Tool string `json:"tool"`
			} `json:"arguments"`
		} `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`)
		return
	}
	id, tool := string(m.ID), m.Params.Arguments.Tool
	gate := h.gate(tool)
	h.mu.Lock()
	h.held[id]++
	h.changed.Broadcast()
	h.mu.Unlock()
	status := http.StatusOK
	select {
	case status = <-gate:
	case <-h.done:
	}
	h.mu.Lock()
	h.held[id]--
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, id, tool)
}

// post sends one message to the proxy and returns the status and body (or
// the error).
func post(url, body string) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Timeout: testTimeout}).Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func heldCall(id int, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"tool":%q}}}`, id, tool)
}

// faultDetails lists the details of the transcript's fault events.
func faultDetails(events []wire.Event) []string {
	var out []string
	for _, e := range events {
		if e.Type == wire.EventFault {
			out = append(out, e.Detail)
		}
	}
	return out
}

// On a server of the stateful revision, the probe's server/discover is
// refused with 400 and never held: id-collision must not borrow its id
// (it did, and collided with nothing), but the id of a tool call the
// server holds. The two calls are then held under one id together, and
// each answer goes back on its own exchange under its own request's id,
// whichever the server finished first.
func TestIDCollisionBorrowsAHeldCallNotARefusedRequest(t *testing.T) {
	h, front, _, rec := serveHeldCalls(t, "id-collision")
	if status, _ := post(front, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`); status != http.StatusBadRequest {
		t.Fatalf("server/discover: status %d; want 400", status)
	}
	answers := make([]string, 3)
	var wg sync.WaitGroup
	wg.Go(func() { _, answers[1] = post(front, heldCall(2, "lender")) })
	h.waitHeld(t, "2", 1)
	wg.Go(func() { _, answers[2] = post(front, heldCall(3, "borrower")) })
	h.waitHeld(t, "2", 2) // the collision, at the server
	// The borrower finishes first: its answer comes on its own exchange.
	h.gate("borrower") <- http.StatusOK
	h.gate("lender") <- http.StatusOK
	wg.Wait()
	want := []string{
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"lender"}]}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"borrower"}]}}`,
	}
	if answers[1] != want[0] || answers[2] != want[1] {
		t.Errorf("the client got %q and %q; want %q and %q", answers[1], answers[2], want[0], want[1])
	}
	details := faultDetails(rec.Events())
	wantDetails := []string{
		"skipped: no other request the client sent is in flight to collide with",
		"send the request on with id 2 (was 3), the id of the tools/call request still in flight; the first answer with id 2 goes back as 2, the next as 3",
	}
	if strings.Join(details, "\n") != strings.Join(wantDetails, "\n") {
		t.Errorf("fault decisions:\n%s\nwant:\n%s", strings.Join(details, "\n"), strings.Join(wantDetails, "\n"))
	}
}

// A lender the server refuses (a 4xx) after the borrower went on was never
// held with it: the firing did not land, the transcript says so, and the
// judge calls the session indeterminate, never a pass.
func TestIDCollisionWithARefusedLenderDidNotLand(t *testing.T) {
	h, front, p, rec := serveHeldCalls(t, "id-collision")
	var wg sync.WaitGroup
	wg.Go(func() { post(front, heldCall(1, "lender")) })
	h.waitHeld(t, "1", 1)
	wg.Go(func() { post(front, heldCall(2, "borrower")) })
	h.waitHeld(t, "1", 2)
	h.gate("lender") <- http.StatusNotFound
	const missed = "did not land: the tools/call request (id 1) whose id it took was refused after this request went on (the server answered it HTTP 404): the server never held the two together"
	for start := time.Now(); !slices.Contains(faultDetails(rec.Events()), missed); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > testTimeout {
			t.Fatalf("no fault event says %q; got %q", missed, faultDetails(rec.Events()))
		}
	}
	h.gate("borrower") <- http.StatusOK
	wg.Wait()
	p.Close("the test ended")
	details := faultDetails(rec.Events())
	if len(details) != 3 || details[2] != missed {
		t.Fatalf("fault events:\n%s\nwant the third to be %q", strings.Join(details, "\n"), missed)
	}
	v := judge.Session(rec.Events())
	want := "the fault fired but did not land: id-collision#1: " + strings.TrimPrefix(missed, "did not land: ")
	found := false
	for _, n := range v.Indeterminate {
		found = found || n == want
	}
	if !found {
		t.Errorf("indeterminate %q; want %q", v.Indeterminate, want)
	}
}
