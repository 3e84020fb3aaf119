package httppipe

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/mcpheader"
)

// deleteWait bounds the DELETE that ends a session: a server that does not
// answer it must not hold up the client's shutdown.
const deleteWait = 2 * time.Second

// header is the headers of a request: the caller's, then the session's,
// then Accept. version, when set, is the request's own protocol version
// (the stateless era's), in place of the session's.
func (p *Pipe) header(accept, version string) http.Header {
	h := p.cfg.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	p.mu.Lock()
	session := p.session
	if version == "" {
		version = p.version
	}
	p.mu.Unlock()
	if accept != "" {
		h.Set("Accept", accept)
	}
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		h.Set("MCP-Protocol-Version", version)
	}
	return h
}

// mirror sets the headers the 2026-07-28 revision has a POST repeat from
// its body (Mcp-Method, Mcp-Name), which a server of that revision checks.
func (p *Pipe) mirror(h http.Header, body []byte) {
	mcpheader.Mirror(h, body, h.Get("MCP-Protocol-Version"))
}

// noteSession learns the session id, before the body that came with it is
// read: the client's next message may follow its first line.
func (p *Pipe) noteSession(resp *http.Response) {
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		p.mu.Lock()
		p.session = s
		p.mu.Unlock()
	}
}

// deleteSession ends the session on the server; its answer does not
// matter (405: the server does not let clients end sessions).
func (p *Pipe) deleteSession(session string) {
	ctx, cancel := context.WithTimeout(p.ctx, deleteWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, p.cfg.URL.String(), nil)
	if err != nil {
		return
	}
	req.Header = p.header("", "")
	req.Header.Set("Mcp-Session-Id", session)
	if resp, err := p.client.Do(req); err == nil {
		drainClose(resp.Body)
	}
}
