package httpchaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/mcpchaos/mcpchaos/wire"
)

// The HTTP-only faults: answering in the server's place (http-error),
// resetting a connection (reset) and ending the session at the server
// (end-session).

// headSent says the response head went to the client already.
func (x *exchange) headSent() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.answered
}

// sessionID is the Mcp-Session-Id of the client's latest POST.
func (p *Proxy) sessionID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastHeaders.Get("Mcp-Session-Id")
}

// answerStatus answers the client with an error status in the server's
// place, as fault label decided. The body is a JSON-RPC error with id
// null, as SDK servers write for an unknown session; its exchange's
// request, if any, is what the status answers.
func (x *exchange) answerStatus(status int, label string) {
	code, message := statusError(status)
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": message + " (mcpchaos fault " + label + ")"},
	})
	x.w.Header().Set("Content-Type", "application/json")
	x.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	x.w.WriteHeader(status)
	x.mu.Lock()
	x.answered = true
	x.mu.Unlock()
	err := x.write(body)
	e := wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: status, Of: x.request, Fault: label,
		Detail: "answered by mcpchaos (fault " + label + "), not the upstream"}
	e.SetRaw(body)
	x.p.record(e)
	if err != nil {
		x.p.record(wire.Event{Type: wire.EventError, Exchange: x.n, Detail: "writing the status to the client failed: " + err.Error()})
	}
	x.injectPending("the exchange was answered with an error status")
}

// statusError is the JSON-RPC error of an injected error status: -32001
// "Session not found" for 404, as the SDK servers write for a session they
// do not know, else -32603 with the status text.
func statusError(status int) (code int, message string) {
	if status == http.StatusNotFound {
		return -32001, "Session not found"
	}
	return -32603, http.StatusText(status)
}

// reset resets the client's connection: the socket is closed with
// SO_LINGER 0, so the client reads ECONNRESET rather than the end of a
// body. Where the connection cannot be taken over (HTTP/2), it is cut.
func (x *exchange) reset() (how string) {
	how, ok := x.closeConn(true)
	if !ok {
		return "connection cut (a reset is not possible on this connection: " + how + ")"
	}
	return how
}

// closeConn takes the client's connection over and closes it, with reset
// as a reset (SO_LINGER 0), and says so; false, with why, when it cannot
// be taken over. The caller keeps every write to the connection out, by
// the stream's lock or by being its handler.
func (x *exchange) closeConn(reset bool) (how string, ok bool) {
	hj, ok := x.w.(http.Hijacker)
	if !ok {
		return "the connection cannot be taken over", false
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return err.Error(), false
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
	if reset {
		return "connection reset", true
	}
	return "connection cut", true
}

// endSession sends the server a DELETE for the client's session, as fault
// label decided, with the headers of the client's latest POST, and records
// it and the server's answer; the client is not told. It returns once the
// server answered, bounded by the session and injectTimeout.
func (p *Proxy) endSession(from *exchange, label string, cause int64) {
	h, target := p.asTheClient()
	for _, k := range []string{"Content-Type", "Content-Length", "Accept", "Mcp-Method", "Mcp-Name", "Last-Event-ID"} {
		h.Del(k)
	}
	ctx, cancel := context.WithTimeout(p.ctx, injectTimeout)
	defer cancel()
	x := &exchange{p: p, n: p.exchanges.Add(1), ctx: ctx,
		line: "DELETE " + target.RequestURI() + " (sent by fault " + label + ")"}
	x.r = &http.Request{Method: http.MethodDelete, URL: target, Header: h}
	p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, HTTP: x.line, MCPSession: h.Get("Mcp-Session-Id"), Fault: label, Of: cause})
	req, err := x.upstreamRequest(http.MethodDelete, nil, h)
	if err != nil {
		p.record(wire.Event{Type: wire.EventError, Exchange: x.n, Detail: err.Error()})
		return
	}
	resp, err := p.upstream.Do(req)
	if err != nil {
		p.record(wire.Event{Type: wire.EventError, Exchange: x.n, Detail: "the DELETE could not reach the upstream: " + err.Error()})
		return
	}
	defer resp.Body.Close()
	body, _ := readLimited(resp.Body, 64<<10)
	e := wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: resp.StatusCode,
		Detail: fmt.Sprintf("the server answered the session's DELETE with %d", resp.StatusCode)}
	if len(body) > 0 {
		e.SetRaw(body)
	}
	p.record(e)
}
