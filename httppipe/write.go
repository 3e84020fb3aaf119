package httppipe

import (
	"bytes"
	"errors"
)

// errClosed is what a write after either close gets.
var errClosed = errors.New("httppipe: the pipe is closed")

type writer struct{ p *Pipe }

// Write takes whole lines as messages and leaves the start of an
// unfinished one for the next Write. It never waits on the network.
func (w writer) Write(b []byte) (int, error) {
	p := w.p
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.mu.Lock()
	closed := p.closedW
	p.mu.Unlock()
	if closed {
		return 0, errClosed
	}
	p.wbuf = append(p.wbuf, b...)
	rest := p.wbuf
	for {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			break
		}
		rest = after
		if line = bytes.TrimSpace(line); len(line) > 0 && !p.post(bytes.Clone(line)) {
			p.wbuf = p.wbuf[:0]
			return len(b), errClosed
		}
	}
	p.wbuf = append(p.wbuf[:0], rest...)
	return len(b), nil
}

// Close stops the writes and starts the shutdown; it does not wait for it.
// An unfinished line is dropped, as it is no message.
func (w writer) Close() error {
	p := w.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closedW {
		return nil
	}
	p.closedW = true
	p.spawnLocked(nil, p.shutdown)
	return nil
}

// shutdown deletes the session, ends the GET stream, and ends the reader's
// input once the POSTs in flight, and the answers the legacy stream owes
// them, are done. A server that never answers holds the reader open until
// Reader.Close, as a stdio server that never exits would.
func (p *Pipe) shutdown() {
	p.mu.Lock()
	session := p.session
	p.mu.Unlock()
	if session != "" {
		p.deleteSession(session)
	}
	p.getCancel()
	p.posts.Wait()
	p.mu.Lock()
	p.postsDone = true
	p.mu.Unlock()
	p.endLegacyIfIdle()
	p.streams.Wait()
	p.closeOut()
}

// post sends one message in a request of its own, in the background.
func (p *Pipe) post(body []byte) bool {
	m := parseOutgoing(body)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closedW {
		return false
	}
	for _, r := range m.requests {
		p.pending[r.id] = r.method
	}
	if p.legacy == nil && !p.triedLegacy && isLegacyURL(p.cfg.URL) {
		p.startLegacyLocked()
	}
	return p.spawnLocked(&p.posts, func() { p.send(body, m) })
}
