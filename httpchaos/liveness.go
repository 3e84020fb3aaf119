package httpchaos

import (
	"context"
	"net/http"
	"net/url"

	"github.com/mcpchaos/mcpchaos/internal/mcpheader"
	"github.com/mcpchaos/mcpchaos/internal/sse"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Probe sends the server a liveness probe (ping, or server/discover in the
// stateless era) on an exchange of its own, with the headers of the client's
// latest POST, and records it and its answer, which the client never sees.
// It is what the stdio relay's probe is: asked when a request passes its
// deadline, the answer tells a server that stopped serving from a handler
// that is merely slow. It returns once the answer came or the probe failed,
// bounded by the session and injectTimeout.
func (p *Proxy) Probe(why string) {
	if !p.enter() {
		return
	}
	defer p.leave()
	pr := wire.NewProbe(p.probes.Add(1), wire.Era(p.era.Load()))
	h, target := p.asTheClient()
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	mcpheader.Mirror(h, pr.Raw, h.Get("MCP-Protocol-Version"))
	ctx, cancel := context.WithTimeout(p.ctx, injectTimeout)
	defer cancel()
	x := &exchange{p: p, n: p.exchanges.Add(1), ctx: ctx, line: "POST " + target.RequestURI() + " (liveness probe of mcpchaos)"}
	x.r = &http.Request{Method: http.MethodPost, URL: target, Header: h}
	p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, HTTP: x.line, MCPSession: h.Get("Mcp-Session-Id")})
	e := wire.Event{Type: wire.EventProbe, Exchange: x.n, Dir: wire.ToServer.String(), ID: pr.ID, Method: pr.Method, Detail: why}
	e.SetRaw(pr.Raw)
	req, err := x.upstreamRequest(http.MethodPost, pr.Raw, h)
	if err != nil {
		e.Detail += "; not delivered: " + err.Error()
		p.record(e)
		return
	}
	p.record(e)
	resp, err := p.upstream.Do(req)
	if err != nil {
		p.record(wire.Event{Type: wire.EventError, Exchange: x.n, Detail: "the liveness probe could not reach the upstream: " + err.Error()})
		return
	}
	p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: resp.StatusCode, Detail: "response: " + orNone(resp.Header.Get("Content-Type"))})
	x.swallow(resp, "the answer to a liveness probe of mcpchaos")
}

// asTheClient is how a request of the proxy's own (a probe, a fault's
// injection or DELETE) reaches the upstream as the client's would: with a
// copy of the headers of the client's latest POST (its session, protocol
// version, token) and to that POST's URL (the upstream's endpoint before
// any).
func (p *Proxy) asTheClient() (http.Header, *url.URL) {
	p.mu.Lock()
	h, target := p.lastHeaders.Clone(), p.lastPost
	p.mu.Unlock()
	if target == nil {
		target = p.cfg.Upstream
	}
	if h == nil {
		h = http.Header{}
	}
	return h, target
}

// ProbeClient sends the client a liveness probe (ping) on an open event
// stream toward it, the GET stream when one is open (a ping relates to no
// request of the client's), else the latest open response stream, and
// records it; the client's answer is recorded and swallowed, never sent
// upstream. It is what the stdio relay's probe toward a client is: asked
// when the client program is past its deadline, the answer tells a client
// whose receive loop still runs from one that is stuck. The stateless
// revision has no server-to-client requests, so there it sends nothing.
func (p *Proxy) ProbeClient(why string) {
	if !p.enter() {
		return
	}
	defer p.leave()
	era := wire.Era(p.era.Load())
	if era == wire.Stateless {
		// The judge then says no probe was sent, which is so.
		return
	}
	pr := wire.NewProbe(p.probes.Add(1), era)
	e := wire.Event{Type: wire.EventProbe, Dir: wire.ToClient.String(), ID: pr.ID, Method: pr.Method, Detail: why}
	e.SetRaw(pr.Raw)
	st := p.clientStream()
	if st == nil {
		e.Detail += "; not delivered: no event stream is open toward the client"
		p.record(e)
		return
	}
	e.Exchange = st.x.n
	if err := st.write(sse.Format("", pr.Raw)); err != nil {
		e.Detail += "; not delivered: " + err.Error()
	}
	p.record(e)
}

// clientStream is the stream a message of the proxy's own goes to the
// client on: the GET stream, else the latest open response stream.
func (p *Proxy) clientStream() *stream {
	p.mu.Lock()
	defer p.mu.Unlock()
	var best *stream
	for _, st := range p.streams {
		switch {
		case best == nil:
			best = st
		case (st.x.r.Method == http.MethodGet) != (best.x.r.Method == http.MethodGet):
			if st.x.r.Method == http.MethodGet {
				best = st
			}
		case st.x.n > best.x.n:
			best = st
		}
	}
	return best
}
