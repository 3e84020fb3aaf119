package httpchaos

import (
	"fmt"
	"net/http"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// forget-session: the server is made to forget a session by the proxy
// sending that session's requests on under an id the server never issued.
// The real server still knows the session; what it is shown is what a
// restarted server, or a replica the load balancer picked that never saw
// the initialize, would be shown. It lasts for the rest of the proxy
// session: the client's retries under its old id meet the same stranger,
// as they would at a restarted server, while a new session (an initialize
// without an id, answered with a new id) is not touched. Streams already
// open under the old id stay open, as a load balancer's connections to
// the first replica do.

// forgery is the id a forgotten session's requests go on with, and the
// fault that forged it.
type forgery struct {
	id, label string
	// used is when the client last sent a request under the session.
	used time.Time
}

// forgetIdle is how long a forgery outlives the client's last use of it:
// longer than a client's retries with backoff, and than the judge's
// deadline, pushed back by progress at most DefaultMaxDeadline.
var forgetIdle = 5 * time.Minute

// forget makes the upstream forget session from now on: its requests go
// on with forged. The first forgery of a session stands.
func (p *Proxy) forget(session, forged, label string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.forgotten == nil {
		p.forgotten = map[string]forgery{}
		p.forgedFrom = map[string]string{}
	}
	if _, ok := p.forgotten[session]; ok {
		return
	}
	now := time.Now()
	for s, f := range p.forgotten {
		if now.Sub(f.used) > forgetIdle {
			delete(p.forgotten, s)
			delete(p.forgedFrom, f.id)
		}
	}
	p.forgotten[session] = forgery{id: forged, label: label, used: now}
	p.forgedFrom[forged] = session
}

// forgottenBy names the fault that made the upstream forget session, "" if
// none did.
func (p *Proxy) forgottenBy(session string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.forgotten[session].label
}

// sendForged puts the forged id in place of a forgotten session's in the
// headers of a request to the upstream, and records it on the exchange.
func (x *exchange) sendForged(h http.Header) {
	session := h.Get("Mcp-Session-Id")
	if session == "" {
		return
	}
	x.p.mu.Lock()
	f, ok := x.p.forgotten[session]
	if ok {
		f.used = time.Now()
		x.p.forgotten[session] = f
	}
	x.p.mu.Unlock()
	if !ok {
		return
	}
	h.Set("Mcp-Session-Id", f.id)
	x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, MCPSession: f.id, Fault: f.label, Action: "forget-session",
		Detail: fmt.Sprintf("sent on with Mcp-Session-Id %s, which the server never issued, in place of the client's %s (fault %s)", f.id, session, f.label)})
}

// unforge gives the client back its own session id where the server's
// answer names the forged one (a server that serves any id echoes it):
// the client must not learn an id that only mcpchaos made.
func (p *Proxy) unforge(h http.Header) {
	forged := h.Get("Mcp-Session-Id")
	if forged == "" {
		return
	}
	p.mu.Lock()
	session, ok := p.forgedFrom[forged]
	p.mu.Unlock()
	if ok {
		h.Set("Mcp-Session-Id", session)
	}
}
