package httppipe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

const (
	// maxMessage caps a body or an event, as the proxy does: a server must
	// not make the client hold unbounded memory.
	maxMessage = 64 << 20
	// dialTimeout bounds connecting; nothing else has a timeout of its own,
	// since a tool call may rightly take long: Reader.Close ends the rest.
	dialTimeout = 10 * time.Second
)

// Config says which server to reach.
type Config struct {
	// URL is the server's MCP endpoint: http://host:port/mcp for
	// streamable HTTP; a path ending in /sse is spoken to the legacy
	// HTTP+SSE way, as is a server that refuses the initialize POST with
	// 400, 404 or 405.
	URL *url.URL
	// Header is sent with every request (Authorization, ...).
	Header http.Header
	// Client makes every request; nil means a client with a 10 s dial
	// timeout, no proxy and no compression, so that what is measured is
	// the server, not a proxy from the environment.
	Client *http.Client
}

// Pipe is one client session over HTTP, as two pipes.
type Pipe struct {
	cfg    Config
	client *http.Client
	// owned is the default client's transport, whose idle connections
	// Reader.Close closes; a caller's client is left alone.
	owned *http.Transport

	ctx    context.Context // ends with Reader.Close
	cancel context.CancelFunc
	// getCtx scopes the GET stream, which Writer.Close ends too.
	getCtx    context.Context
	getCancel context.CancelFunc

	pr  *io.PipeReader
	pw  *io.PipeWriter
	eof sync.Once

	wmu  sync.Mutex // serializes Write
	wbuf []byte     // the start of a line not yet complete

	mu        sync.Mutex
	closedW   bool // Writer.Close (or Reader.Close): no more messages
	closedR   bool // Reader.Close: no more goroutines
	postsDone bool // after Writer.Close, the last POST has ended
	session   string
	version   string
	// pending maps the id of each request sent and not yet answered to
	// its method.
	pending     map[string]string
	getOpened   bool
	triedLegacy bool
	legacy      *legacy // nil: streamable HTTP

	all     sync.WaitGroup // every goroutine the Pipe started
	posts   sync.WaitGroup // POSTs, with their resumptions
	streams sync.WaitGroup // the GET stream, or the legacy stream
}

// Dial makes a Pipe. It does no I/O: the first message written starts the
// session.
func Dial(cfg Config) (*Pipe, error) {
	switch {
	case cfg.URL == nil:
		return nil, errors.New("httppipe: no URL")
	case cfg.URL.Scheme != "http" && cfg.URL.Scheme != "https", cfg.URL.Host == "":
		return nil, fmt.Errorf("httppipe: %s is not an http:// or https:// URL", cfg.URL.Redacted())
	}
	p := &Pipe{cfg: cfg, client: cfg.Client, pending: map[string]string{}}
	if p.client == nil {
		p.owned = &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: dialTimeout}).DialContext,
			TLSHandshakeTimeout: dialTimeout,
			DisableCompression:  true,
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 16,
		}
		p.client = &http.Client{Transport: p.owned}
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.getCtx, p.getCancel = context.WithCancel(p.ctx)
	p.pr, p.pw = io.Pipe()
	return p, nil
}

// Reader is the server's messages, one JSON-RPC message per line. Closing
// it ends the Pipe: every request is cancelled, a Read in progress
// returns, and Close returns once every goroutine the Pipe started has.
func (p *Pipe) Reader() io.ReadCloser { return reader{p} }

// Writer takes the client's messages, one per line, each POSTed in its own
// request. Closing it is the client's shutdown: the session is deleted,
// the GET stream ends, and the reader reaches its end once the POSTs in
// flight have.
func (p *Pipe) Writer() io.WriteCloser { return writer{p} }

type reader struct{ p *Pipe }

func (r reader) Read(b []byte) (int, error) { return r.p.pr.Read(b) }

func (r reader) Close() error {
	p := r.p
	p.mu.Lock()
	p.closedR, p.closedW = true, true
	p.mu.Unlock()
	p.pr.Close() // first: nothing may reach a Read once Close is called
	p.cancel()
	p.all.Wait()
	if p.owned != nil {
		p.owned.CloseIdleConnections()
	}
	return nil
}

// spawnLocked runs f as a goroutine of the Pipe, counted in group too
// (nil: none), unless the reader has closed. p.mu must be held: a group's
// Add then cannot race the Wait that follows the close.
func (p *Pipe) spawnLocked(group *sync.WaitGroup, f func()) bool {
	if p.closedR {
		return false
	}
	p.all.Add(1)
	if group != nil {
		group.Add(1)
	}
	go func() {
		defer p.all.Done()
		if group != nil {
			defer group.Done()
		}
		f()
	}()
	return true
}

// closeOut ends the reader's input: the server has nothing more to say.
func (p *Pipe) closeOut() {
	p.eof.Do(func() { p.pw.Close() })
}
