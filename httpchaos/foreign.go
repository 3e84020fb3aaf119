package httpchaos

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/mcpchaos/mcpchaos/internal/mcpheader"
	"github.com/mcpchaos/mcpchaos/internal/sse"
	"github.com/mcpchaos/mcpchaos/wire"
)

// ForeignHost is the site the foreign-origin fault's requests claim to
// come from: a name of the reserved .example domain, so that nothing real
// is named.
const ForeignHost = "evil.example"

// foreignSkip says why the foreign-origin fault cannot act on this
// session, or "".
func (p *Proxy) foreignSkip() string {
	host := p.cfg.Upstream.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "skipped: the server is at " + p.cfg.Upstream.Host + ", not a loopback address: DNS rebinding turns a page against a server on the user's own machine"
	}
	p.mu.Lock()
	legacy := len(p.legacyPaths) > 0
	p.mu.Unlock()
	if legacy {
		return "skipped: the legacy HTTP+SSE transport opens its sessions with a GET, which carries no Origin"
	}
	return ""
}

// foreign sends the server, one after the other on exchanges of the
// proxy's own, the handshake of a page of a foreign site for each of
// forgeries, and records each with what the server answered (a foreign
// event). A session one of them opened is ended with a DELETE, so that
// it does not outlive the run. It returns once all are done, bounded by
// the session and injectTimeout each.
func (p *Proxy) foreign(label string, cause int64, forgeries []string) {
	if !p.enter() {
		return
	}
	defer p.leave()
	for i, forged := range forgeries {
		p.sendForeign(label, cause, forged, int64(i+1))
	}
}

func (p *Proxy) sendForeign(label string, cause int64, forged string, n int64) {
	h, last := p.asTheClient()
	target := p.target(&http.Request{URL: last})
	// The client's credentials go with it, so that only the forged
	// headers differ from a request the server would serve; nothing of
	// its session does.
	for _, k := range []string{"Mcp-Session-Id", "Last-Event-ID", "Mcp-Method", "Mcp-Name", "Content-Length", "Origin", "Referer", "MCP-Protocol-Version"} {
		h.Del(k)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	port := target.Port()
	if port == "" {
		port = "80"
		if target.Scheme == "https" {
			port = "443"
		}
	}
	foreignHost := net.JoinHostPort(ForeignHost, port)
	host := target.Host
	switch forged {
	case "host":
		host = foreignHost
	case "origin":
		h.Set("Origin", "http://"+foreignHost)
	case "null-origin":
		h.Set("Origin", "null")
	case "rebinding":
		host = foreignHost
		h.Set("Origin", "http://"+foreignHost)
	}
	era := wire.Era(p.era.Load())
	raw := foreignHandshake(n, era)
	m := wire.Classify(raw)
	version := "" // initialize names its version in its params
	if era == wire.Stateless {
		version = statelessVersion
		h.Set("MCP-Protocol-Version", version)
	}
	mcpheader.Mirror(h, raw, version)
	ctx, cancel := context.WithTimeout(p.ctx, injectTimeout)
	defer cancel()
	x := &exchange{p: p, n: p.exchanges.Add(1), ctx: ctx, line: "POST " + target.RequestURI() + " (sent by fault " + label + ")"}
	e := wire.Event{Type: wire.EventForeign, Exchange: x.n, Fault: label, Of: cause, Forged: forged,
		Dir: wire.ToServer.String(), Method: m.Method, ID: m.ID, Detail: "Host: " + host + "; Origin: " + cmp.Or(h.Get("Origin"), "none")}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(raw))
	if err != nil {
		e.Detail += "; not sent: " + err.Error()
		p.record(e)
		return
	}
	copyHeaders(req.Header, h)
	req.Host = host
	resp, err := p.upstream.Do(req)
	if err != nil {
		e.Detail += "; no answer: " + err.Error()
		p.record(e)
		return
	}
	defer resp.Body.Close()
	e.Status = resp.StatusCode
	e.MCPSession = resp.Header.Get("Mcp-Session-Id")
	answer, body := readForeignAnswer(resp, p.cfg.MaxBody)
	switch {
	case answer != nil:
		am := wire.Classify(answer)
		e.Kind = am.Kind.String()
		e.SetRaw(answer)
	case len(body) > 0:
		e.SetRaw(body)
	}
	p.record(e)
	if e.MCPSession != "" {
		p.endForeignSession(target.String(), h, host, e.MCPSession, label)
	}
}

// statelessVersion is the revision the foreign page's server/discover asks
// for, in its _meta and its MCP-Protocol-Version header.
const statelessVersion = "2026-07-28"

// foreignHandshake is the request a foreign page opens a session with: an
// initialize, or in the stateless era server/discover.
func foreignHandshake(n int64, era wire.Era) []byte {
	id := wire.InjectIDPrefix + "foreign-" + strconv.FormatInt(n, 10) + `"`
	if era == wire.Stateless {
		return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + statelessVersion + `",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"mcpchaos-foreign-page","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	}
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},` +
		`"clientInfo":{"name":"mcpchaos-foreign-page","version":"1"}}}`)
}

// readForeignAnswer reads the answer a response carries (the first
// response or error of an event stream, or a JSON body's message), and
// the body as read when it holds none.
func readForeignAnswer(resp *http.Response, max int) (answer, body []byte) {
	if mediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
		er := sse.NewReader(resp.Body, max)
		for {
			ev, err := er.Next()
			if err != nil {
				return nil, nil
			}
			if ev.IsMessage() {
				if m := wire.Classify(ev.Data); m.IsAnswer() {
					return bytes.Clone(ev.Data), nil
				}
			}
		}
	}
	body, _ = readLimited(resp.Body, min(max, 64<<10))
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		if m := wire.Classify(trimmed); m.IsAnswer() {
			return trimmed, nil
		}
	}
	return nil, body
}

// endForeignSession ends a session a foreign request opened, as the page
// could have, with the same forged headers, and records it.
func (p *Proxy) endForeignSession(target string, h http.Header, host, session, label string) {
	ctx, cancel := context.WithTimeout(p.ctx, injectTimeout)
	defer cancel()
	n := p.exchanges.Add(1)
	p.record(wire.Event{Type: wire.EventHTTP, Exchange: n, HTTP: "DELETE (sent by fault " + label + ": the session a foreign page opened)", MCPSession: session, Fault: label})
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, target, nil)
	if err != nil {
		return
	}
	copyHeaders(req.Header, h)
	req.Header.Del("Content-Type")
	req.Header.Set("Mcp-Session-Id", session)
	req.Host = host
	resp, err := p.upstream.Do(req)
	if err != nil {
		p.record(wire.Event{Type: wire.EventError, Exchange: n, Detail: "the DELETE could not reach the upstream: " + err.Error()})
		return
	}
	resp.Body.Close()
	p.record(wire.Event{Type: wire.EventHTTP, Exchange: n, Status: resp.StatusCode,
		Detail: fmt.Sprintf("the server answered the DELETE of the foreign page's session with %d", resp.StatusCode)})
}
