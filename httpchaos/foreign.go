package httpchaos

import (
	"bytes"
	"cmp"
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mcpchaos/mcpchaos/faults"
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
	if !faults.Loopback(p.cfg.Upstream) {
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
	h, target := p.visitHeaders()
	v := visit{forged: forged, header: h, host: forgeHeaders(forged, h, target)}
	v.detail = hostAndOrigin(cmp.Or(v.host, target.Host), h)
	p.sendVisit(label, cause, target, v, foreignHandshake("foreign-"+strconv.FormatInt(n, 10), wire.Era(p.era.Load())))
}

// forgeHeaders sets in h the Origin of forged (one of
// faults.ForeignForgeries) for a request to target, and returns the Host
// it forges, or "" to keep target's: a foreign site's name on target's
// port, as a page the site's DNS has pointed at this machine sends it.
func forgeHeaders(forged string, h http.Header, target *url.URL) (host string) {
	port := target.Port()
	if port == "" {
		port = "80"
		if target.Scheme == "https" {
			port = "443"
		}
	}
	foreignHost := net.JoinHostPort(ForeignHost, port)
	switch forged {
	case "host":
		h.Del("Origin")
		return foreignHost
	case "origin":
		h.Set("Origin", "http://"+foreignHost)
	case "null-origin":
		h.Set("Origin", "null")
	case "rebinding":
		h.Set("Origin", "http://"+foreignHost)
		return foreignHost
	}
	return ""
}

// hostAndOrigin is how the record names a request's Host and Origin.
func hostAndOrigin(host string, h http.Header) string {
	return "Host: " + host + "; Origin: " + cmp.Or(h.Get("Origin"), "none")
}

// forgeOrigin sends the client's own request req on with the Host and
// Origin of forged (fault forge-origin), and records what it changed.
func (x *exchange) forgeOrigin(req *http.Request, m *wire.Message, forged, label string) {
	was := hostAndOrigin(req.Host, req.Header)
	if host := forgeHeaders(forged, req.Header, req.URL); host != "" {
		req.Host = host
	}
	x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Fault: label, Action: "forge-origin", Forged: forged,
		Method: m.Method, ID: m.ID, Kind: m.Kind.String(),
		Detail: hostAndOrigin(req.Host, req.Header) + ", in place of the client's " + was})
}

// visitHeaders are the headers of a request of the proxy's own beside the
// client's session, and where it goes: the client's credentials go with
// it, so that only what a fault changes differs from a request the server
// would serve; nothing of its session does.
func (p *Proxy) visitHeaders() (http.Header, *url.URL) {
	h, last := p.asTheClient()
	for _, k := range []string{"Mcp-Session-Id", "Last-Event-ID", "Mcp-Method", "Mcp-Name", "Content-Length", "Origin", "Referer", "MCP-Protocol-Version"} {
		h.Del(k)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	return h, p.target(&http.Request{URL: last})
}

// visit is a request of the proxy's own that a fault made (foreign-origin,
// credentials): what it forged, its headers and Host ("" for the
// upstream's), what the record says of it, and the client's session it is
// sent in, if any (a session it opens otherwise is ended after).
type visit struct {
	forged, host, detail string
	header               http.Header
	session              string
}

// sendVisit sends raw as v says, and records it with what the server
// answered (a foreign event).
func (p *Proxy) sendVisit(label string, cause int64, target *url.URL, v visit, raw []byte) {
	h := v.header
	m := wire.Classify(raw)
	version := h.Get("MCP-Protocol-Version")
	if wire.Era(p.era.Load()) == wire.Stateless && version == "" {
		version = statelessVersion
		h.Set("MCP-Protocol-Version", version)
	}
	mcpheader.Mirror(h, raw, version)
	ctx, cancel := context.WithTimeout(p.ctx, injectTimeout)
	defer cancel()
	e := wire.Event{Type: wire.EventForeign, Exchange: p.exchanges.Add(1), Fault: label, Of: cause, Forged: v.forged,
		Dir: wire.ToServer.String(), Method: m.Method, ID: m.ID, Detail: v.detail}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(raw))
	if err != nil {
		e.Detail += "; not sent: " + err.Error()
		p.record(e)
		return
	}
	copyHeaders(req.Header, h)
	req.Host = cmp.Or(v.host, target.Host)
	resp, err := p.upstream.Do(req)
	if err != nil {
		e.Detail += "; no answer: " + err.Error()
		p.record(e)
		return
	}
	defer resp.Body.Close()
	e.Status = resp.StatusCode
	e.Challenge = resp.Header.Get("WWW-Authenticate")
	if issued := resp.Header.Get("Mcp-Session-Id"); issued != v.session {
		e.MCPSession = issued
	}
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
		p.endForeignSession(target.String(), h, req.Host, e.MCPSession, label)
	}
}

// statelessVersion is the revision the foreign page's server/discover asks
// for, in its _meta and its MCP-Protocol-Version header.
const statelessVersion = "2026-07-28"

// foreignHandshake is the request a foreign page opens a session with: an
// initialize, or in the stateless era server/discover.
func foreignHandshake(name string, era wire.Era) []byte {
	id := wire.InjectIDPrefix + name + `"`
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

// endForeignSession ends a session a request of the proxy's own opened,
// as its sender could have, with the same headers, and records it as a
// foreign event of its own (no http event: the judge must not take it for
// the end of the client's session).
func (p *Proxy) endForeignSession(target string, h http.Header, host, session, label string) {
	ctx, cancel := context.WithTimeout(p.ctx, injectTimeout)
	defer cancel()
	e := wire.Event{Type: wire.EventForeign, Exchange: p.exchanges.Add(1), Fault: label, Dir: wire.ToServer.String(),
		Method: http.MethodDelete, MCPSession: session, Detail: "the end of the session the request opened"}
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
		e.Detail += "; no answer: " + err.Error()
		p.record(e)
		return
	}
	resp.Body.Close()
	e.Status = resp.StatusCode
	p.record(e)
}
