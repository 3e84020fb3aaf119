package httppipe

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/sse"
)

const (
	// reconnects bounds the attempts in a row to resume a stream that
	// brings nothing new.
	reconnects = 3
	// defaultRetry and maxRetry bound the wait before a reconnection; a
	// stream's retry: field sets it within them, so that a server cannot
	// make the client wait past the probe's deadlines.
	defaultRetry = time.Second
	maxRetry     = 2 * time.Second
)

// cursor is where a stream stands, over its connections.
type cursor struct {
	lastID string
	retry  time.Duration
	events int // complete events read
}

func (c *cursor) delay() time.Duration {
	if c.retry <= 0 {
		return defaultRetry
	}
	return min(c.retry, maxRetry)
}

// readEvents delivers a stream's messages as they come, striking the
// answers off waiting (nil: none awaited); with untilAnswered it stops
// once none is. An unfinished event at the end is never delivered, and a
// stream the reader cannot frame (an event over the size cap) ends there.
func (p *Pipe) readEvents(body io.Reader, c *cursor, waiting map[string]bool, untilAnswered bool) {
	r := sse.NewReader(body, maxMessage)
	for {
		ev, err := r.Next()
		if err != nil {
			return
		}
		if ev.Retry > 0 {
			c.retry = ev.Retry
		}
		if ev.ID != "" {
			c.lastID = ev.ID
		}
		if ev.ID == "" && !ev.HasData {
			continue // blank lines, or a retry: alone
		}
		c.events++
		if !ev.IsMessage() {
			continue
		}
		for _, id := range p.deliver(ev.Data) {
			delete(waiting, id)
		}
		if untilAnswered && len(waiting) == 0 {
			return
		}
	}
}

// readPostStream delivers a POST's event stream. When it ends before
// answering every request the POST carried, it is resumed from its last
// event id with a GET (MCP 2025-11-25, Transports, Resumability and
// Redelivery), until the answers come or the server stops sending
// anything new. Without an event id there is nothing to resume from: the
// requests are left to the caller's deadlines.
func (p *Pipe) readPostStream(body io.Reader, m outgoing) {
	waiting := map[string]bool{}
	for _, id := range m.ids() {
		waiting[id] = true
	}
	var c cursor
	p.readEvents(body, &c, waiting, false)
	for tries := 0; len(waiting) > 0 && c.lastID != "" && tries < reconnects; tries++ {
		if !sleep(p.ctx, c.delay()) {
			return
		}
		resp, err := p.get(p.ctx, p.cfg.URL, c.lastID, m.version)
		if err != nil {
			continue
		}
		if !isEventStream(resp) {
			drainClose(resp.Body)
			return
		}
		from := c.lastID
		p.readEvents(resp.Body, &c, waiting, true)
		resp.Body.Close()
		if c.lastID != from {
			tries = -1 // it moved on: a fresh count
		}
	}
}

// openGet opens the GET stream for the server's own messages, once, in
// the stateful era.
func (p *Pipe) openGet() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.getOpened || p.closedW || p.legacy != nil {
		return
	}
	p.getOpened = true
	p.spawnLocked(&p.streams, p.runGet)
}

// runGet keeps the GET stream open while the client is: a stream that
// ends is reopened, from its last event id, until attempts in a row bring
// nothing. A server without one (405, or any other refusal) is fine.
func (p *Pipe) runGet() {
	var c cursor
	for failures := 0; failures < reconnects; {
		resp, err := p.get(p.getCtx, p.cfg.URL, c.lastID, "")
		switch {
		case err != nil:
			failures++
		case !isEventStream(resp):
			drainClose(resp.Body)
			return
		default:
			seen := c.events
			p.readEvents(resp.Body, &c, nil, false)
			resp.Body.Close()
			if c.events > seen {
				failures = 0
			} else {
				failures++
			}
		}
		if !sleep(p.getCtx, c.delay()) {
			return
		}
	}
}

// get opens an event stream with a GET.
func (p *Pipe) get(ctx context.Context, target *url.URL, lastID, version string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header = p.header("text/event-stream", version)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	return p.client.Do(req)
}

func isEventStream(resp *http.Response) bool {
	return resp.StatusCode == http.StatusOK && mediaType(resp) == "text/event-stream"
}

// sleep waits d, or less if ctx ends first; it reports whether ctx is
// still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
