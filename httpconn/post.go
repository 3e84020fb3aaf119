package httpconn

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/ctxsleep"
	"github.com/mcpchaos/mcpchaos/internal/sse"
)

// message is what the Conn needs to know of a message it sends.
type message struct {
	// ids are the JSON texts of the ids of its requests (a batch may hold
	// several).
	ids        []string
	initialize bool // an initialize request
	// initialized is notifications/initialized: the session is up, and
	// the GET stream may open.
	initialized bool
}

func parseMessage(body []byte) message {
	type one struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var all []one
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		_ = json.Unmarshal(body, &all)
	} else {
		var m one
		if json.Unmarshal(body, &m) == nil {
			all = append(all, m)
		}
	}
	var out message
	for _, m := range all {
		if m.Method == "" {
			continue
		}
		if len(m.ID) > 0 && string(m.ID) != "null" {
			out.ids = append(out.ids, string(m.ID))
		}
		out.initialize = out.initialize || m.Method == "initialize" && len(m.ID) > 0
		out.initialized = out.initialized || m.Method == "notifications/initialized"
	}
	return out
}

// post sends one message in its own request. The initialized notification
// is sent before anything after it: each POST is a request of its own, and
// one that overtook it would reach the server before the session is up.
// The SDKs' clients wait for its POST too (the TypeScript client awaits
// every send, the Python one every notification), so a server is not held
// to an order no real client puts it through; the early-request fault does
// that on purpose.
func (c *Conn) post(body []byte) {
	m := parseMessage(body)
	done := make(chan struct{})
	c.posts.Add(1)
	if !c.goBackground(func() {
		defer c.posts.Done()
		defer close(done)
		c.send(body, m)
	}) {
		c.posts.Done()
		return
	}
	if m.initialized {
		t := time.NewTimer(initializedWait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C: // a server that never answers it is judged on what follows
		case <-c.ctx.Done():
		}
	}
}

func (c *Conn) send(body []byte, m message) {
	target, why := c.postTarget()
	if target == nil {
		c.synthesize(m.ids, "HTTP: the legacy transport's stream named no endpoint to POST to: "+why)
		return
	}
	if c.isLegacy() {
		// Owed before the POST goes: the answer may come on the stream
		// before the POST's own response does.
		c.owe(m.ids)
	}
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		c.synthesize(m.ids, "HTTP: "+err.Error())
		return
	}
	req.Header = c.headers(body)
	resp, err := c.do(req)
	if err != nil {
		if c.ctx.Err() == nil {
			c.synthesize(m.ids, "HTTP: "+err.Error())
		}
		return
	}
	c.noteSession(resp)
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		c.answered(resp, m)
	case m.initialize && !c.isLegacy() && (resp.StatusCode == 400 || resp.StatusCode == 404 || resp.StatusCode == 405):
		// A server of the legacy transport refuses the initialize POST:
		// open its stream, and send the initialize again to its endpoint
		// (MCP 2025-11-25, Transports, Backwards Compatibility).
		drainClose(resp.Body)
		c.mu.Lock()
		c.legacy = true
		c.mu.Unlock()
		c.startLegacy()
		c.send(body, m)
	default:
		c.failed(resp, m)
	}
}

func (c *Conn) isLegacy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.legacy
}

// answered handles a 2xx: nothing (202), one JSON body, or an event stream.
func (c *Conn) answered(resp *http.Response, m message) {
	defer resp.Body.Close()
	switch mediaType(resp) {
	case "application/json":
		if c.isLegacy() {
			// The legacy transport's messages all come on its stream; a
			// client reads no POST's body, whatever a server puts there.
			drainClose(resp.Body)
			break
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage+1))
		if err != nil || len(body) > maxMessage {
			c.synthesize(m.ids, "HTTP: the JSON answer could not be read")
			return
		}
		c.deliverBody(body)
	case "text/event-stream":
		c.readPostStream(resp.Body, m.ids)
	default:
		drainClose(resp.Body)
	}
	if m.initialized && !c.isLegacy() {
		c.openGet()
	}
}

// deliverBody delivers a JSON body: one message, or each of a batch.
func (c *Conn) deliverBody(body []byte) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil {
			for _, msg := range batch {
				c.deliver(msg)
			}
			return
		}
	}
	c.deliver(trimmed)
}

// failed handles an error status: a JSON-RPC answer in the body is the
// server's own word; else each request gets an error naming the status.
func (c *Conn) failed(resp *http.Response, m message) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	drainClose(resp.Body)
	if mediaType(resp) == "application/json" && answersAny(body, m.ids) {
		c.deliverBody(body)
		// No other answer comes, on a stream or anywhere.
		for _, id := range m.ids {
			c.strike(id)
		}
		return
	}
	text := strings.Join(strings.Fields(string(body)), " ")
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	c.synthesize(m.ids, strings.TrimSpace(fmt.Sprintf("HTTP %s: %s", resp.Status, text)))
}

// answersAny reports whether body holds an answer to one of ids.
func answersAny(body []byte, ids []string) bool {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	for _, id := range ids {
		if string(m.ID) == id {
			return true
		}
	}
	return false
}

func (c *Conn) noteSession(resp *http.Response) {
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.mu.Lock()
		c.session = s
		c.mu.Unlock()
	}
}

// readPostStream delivers a POST's event stream; when it ends before
// answering every request it carried, the stream is resumed with
// Last-Event-ID, if it gave event ids.
func (c *Conn) readPostStream(body io.Reader, ids []string) {
	waiting := map[string]bool{}
	for _, id := range ids {
		waiting[id] = true
	}
	lastID, retry := c.readEvents(body, waiting)
	for attempt := 0; len(waiting) > 0 && lastID != "" && attempt < reconnects; attempt++ {
		if !ctxsleep.Sleep(c.ctx, retryOf(retry)) {
			return
		}
		resp, err := c.get(c.ctx, lastID)
		if err != nil {
			continue
		}
		if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
			drainClose(resp.Body)
			return
		}
		id, r := c.readEvents(resp.Body, waiting)
		resp.Body.Close()
		if id != "" {
			lastID, attempt = id, -1
		}
		if r > 0 {
			retry = r
		}
	}
}

// readEvents delivers a stream's messages, striking the answers off
// waiting (nil: none awaited), and returns the last event id and retry.
func (c *Conn) readEvents(body io.Reader, waiting map[string]bool) (lastID string, retry time.Duration) {
	er := sse.NewReader(body, maxMessage)
	for {
		ev, err := er.Next()
		if err != nil {
			return lastID, retry
		}
		if ev.ID != "" {
			lastID = ev.ID
		}
		if ev.Retry > 0 {
			retry = ev.Retry
		}
		if !ev.IsMessage() {
			continue
		}
		if waiting != nil {
			if id, ok := responseID(ev.Data); ok {
				delete(waiting, id)
			}
		}
		c.deliver(ev.Data)
	}
}

// responseID is the JSON text of the id of a response or error.
func responseID(msg []byte) (string, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return "", false
	}
	return string(m.ID), true
}

// get opens a GET event stream on the endpoint.
func (c *Conn) get(ctx context.Context, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.URL.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header = c.headers(nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return c.do(req)
}

// do sends req, and notes the first status with which the server refused
// one of the connection's requests for want of credentials (see Refused).
func (c *Conn) do(req *http.Request) (*http.Response, error) {
	resp, err := c.client.Do(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		c.mu.Lock()
		if c.refused == "" {
			c.refused = resp.Status
		}
		c.mu.Unlock()
	}
	return resp, err
}

// Refused is the status ("401 Unauthorized", "403 Forbidden") with which
// the server first refused a request of the connection for want of
// credentials, or "". The status says it whatever the body holds: an
// error of the server's own naming the request, or one with id null.
func (c *Conn) Refused() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// openGet opens the GET stream for the server's own messages, once; a
// server without one (405) is fine. A stream that ends is reopened, from
// its last event id, a few times.
func (c *Conn) openGet() {
	c.mu.Lock()
	if c.getOpen {
		c.mu.Unlock()
		return
	}
	c.getOpen = true
	c.mu.Unlock()
	c.goBackground(func() {
		failures := 0
		lastID, retry := "", time.Duration(0)
		for failures < reconnects && c.getCtx.Err() == nil {
			resp, err := c.get(c.getCtx, lastID)
			if err != nil {
				failures++
			} else if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
				drainClose(resp.Body)
				return
			} else {
				id, r := c.readEvents(resp.Body, nil)
				resp.Body.Close()
				if id != "" {
					lastID, failures = id, 0
				} else {
					failures++
				}
				if r > 0 {
					retry = r
				}
			}
			if !ctxsleep.Sleep(c.getCtx, retryOf(retry)) {
				return
			}
		}
	})
}

// postTarget is where messages go: the endpoint, or the legacy
// transport's message endpoint once its stream named it. Without one, it
// says why not.
func (c *Conn) postTarget() (*url.URL, string) {
	c.mu.Lock()
	legacy, ready := c.legacy, c.endpointReady
	c.mu.Unlock()
	if !legacy {
		return c.cfg.URL, ""
	}
	t := time.NewTimer(endpointWait)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
		return nil, fmt.Sprintf("no endpoint event came on GET %s within %s", c.cfg.URL.RequestURI(), endpointWait)
	case <-c.ctx.Done():
		return nil, "the connection was closed"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.endpoint, c.noEndpoint
}

// startLegacy opens the legacy transport's stream, once: its endpoint
// event says where to POST, and every server message comes on it.
func (c *Conn) startLegacy() {
	ready := make(chan struct{})
	c.mu.Lock()
	if c.endpointReady != nil {
		c.mu.Unlock()
		return
	}
	c.endpointReady = ready
	ended := make(chan struct{})
	c.legacyEnded = ended
	c.mu.Unlock()
	var once sync.Once
	markReady := func(u *url.URL, why string) {
		once.Do(func() {
			c.mu.Lock()
			c.endpoint, c.noEndpoint = u, why
			c.mu.Unlock()
			close(ready)
		})
	}
	// The path alone: behind mcpchaos's proxy the host is the proxy's.
	get := "GET " + c.cfg.URL.RequestURI()
	if !c.goBackground(func() {
		defer close(ended)
		why := "the stream ended before its endpoint event"
		defer func() { markReady(nil, why) }()
		resp, err := c.get(c.getCtx, "")
		if err != nil {
			why = get + ": " + err.Error()
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || mediaType(resp) != "text/event-stream" {
			why = fmt.Sprintf("%s answered %s (%s), not an event stream: is this the server's SSE endpoint?", get, resp.Status, cmp.Or(resp.Header.Get("Content-Type"), "no Content-Type"))
			return
		}
		er := sse.NewReader(resp.Body, maxMessage)
		for {
			ev, err := er.Next()
			if err != nil {
				return
			}
			if ev.Name == "endpoint" {
				u, err := c.cfg.URL.Parse(strings.TrimSpace(string(ev.Data)))
				if err != nil {
					why = fmt.Sprintf("its endpoint event %q is not a URL (%v), and no other came", ev.Data, err)
					continue
				}
				markReady(u, "")
				continue
			}
			if ev.IsMessage() {
				c.deliver(ev.Data)
				if id, ok := responseID(ev.Data); ok {
					c.strike(id)
				}
			}
		}
	}) {
		close(ended)
		markReady(nil, "the connection was closed")
	}
}
