package httppipe

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/sse"
)

// endpointWait bounds the wait for the legacy transport's endpoint event.
const endpointWait = 10 * time.Second

// errNoEndpoint answers the messages that have nowhere to go.
var errNoEndpoint = errors.New("HTTP+SSE: the server's event stream named no endpoint to POST to")

// legacy is the HTTP+SSE transport of MCP 2024-11-05: one GET stream
// carries every server message, after an endpoint event that says where
// the client POSTs.
type legacy struct {
	deadline time.Time // for the endpoint event
	ready    chan struct{}
	once     sync.Once
	endpoint *url.URL // set before ready closes; nil: none came
	cancel   context.CancelFunc
}

// settle says where to POST, once; nil says nowhere.
func (l *legacy) settle(u *url.URL) bool {
	settled := false
	l.once.Do(func() {
		l.endpoint, settled = u, true
		close(l.ready)
	})
	return settled
}

// endpointURL waits for the endpoint, until the deadline; a stream that
// has not named one by then is given up.
func (l *legacy) endpointURL(ctx context.Context) (*url.URL, error) {
	t := time.NewTimer(time.Until(l.deadline))
	defer t.Stop()
	select {
	case <-l.ready:
	case <-t.C:
		if l.settle(nil) {
			l.cancel()
		}
		<-l.ready
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if l.endpoint == nil {
		return nil, errNoEndpoint
	}
	return l.endpoint, nil
}

func isLegacyURL(u *url.URL) bool {
	return strings.HasSuffix(u.Path, "/sse")
}

// startLegacyLocked opens the legacy stream; p.mu must be held.
func (p *Pipe) startLegacyLocked() *legacy {
	ctx, cancel := context.WithCancel(p.ctx)
	l := &legacy{deadline: time.Now().Add(endpointWait), ready: make(chan struct{}), cancel: cancel}
	p.legacy, p.triedLegacy = l, true
	if !p.spawnLocked(&p.streams, func() {
		defer cancel()
		p.runLegacy(ctx, l)
	}) {
		l.settle(nil)
		cancel()
	}
	return l
}

// startFallback opens the legacy stream for a refused initialize, unless
// a session, or the legacy transport, was already tried.
func (p *Pipe) startFallback() *legacy {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.triedLegacy || p.session != "" {
		return nil
	}
	return p.startLegacyLocked()
}

// abandonLegacy goes back to streamable HTTP after a fallback found no
// legacy transport either: the refusal was the server's answer.
func (p *Pipe) abandonLegacy(l *legacy) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.legacy == l {
		p.legacy = nil
	}
}

// target is where messages go: the endpoint, or the legacy transport's
// once its stream named it.
func (p *Pipe) target() (*url.URL, error) {
	p.mu.Lock()
	l := p.legacy
	p.mu.Unlock()
	if l == nil {
		return p.cfg.URL, nil
	}
	return l.endpointURL(p.ctx)
}

// runLegacy reads the legacy stream. Once it has named its endpoint, the
// stream is the server's only output: its end is the reader's.
func (p *Pipe) runLegacy(ctx context.Context, l *legacy) {
	defer l.settle(nil)
	resp, err := p.get(ctx, p.cfg.URL, "", "")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if !isEventStream(resp) {
		return
	}
	r := sse.NewReader(resp.Body, maxMessage)
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		switch {
		case ev.Name == "endpoint":
			if u, err := p.cfg.URL.Parse(strings.TrimSpace(string(ev.Data))); err == nil {
				l.settle(u)
			}
		case ev.IsMessage():
			p.deliver(ev.Data)
		}
	}
	select {
	case <-l.ready:
		if l.endpoint != nil {
			p.closeOut()
		}
	default:
	}
}

// endLegacyIfIdle ends the legacy stream once the client has closed and
// every request it sent has been answered: nothing more is owed.
func (p *Pipe) endLegacyIfIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.legacy != nil && p.closedW && p.postsDone && len(p.pending) == 0 {
		p.legacy.cancel()
	}
}
