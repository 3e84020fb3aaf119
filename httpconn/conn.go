package httpconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/mcpheader"
)

const (
	// maxMessage caps a body or an event, as the proxy does.
	maxMessage = 64 << 20
	// maxErrorBody is how much of an error response is read for its text.
	maxErrorBody = 64 << 10
	// reconnects bounds the attempts to resume a stream in a row.
	reconnects = 3
	// defaultRetry and maxRetry bound the wait before a reconnection; a
	// server's retry: field sets it within them.
	defaultRetry = time.Second
	maxRetry     = 2 * time.Second
	// endpointWait bounds the wait for the legacy transport's endpoint event.
	endpointWait = 10 * time.Second
	// deleteWait bounds the DELETE that ends a session.
	deleteWait = 2 * time.Second
	// initializedWait bounds the wait for the POST of the initialized
	// notification before the next message is sent.
	initializedWait = 5 * time.Second
)

// Config says which server to reach.
type Config struct {
	// URL is the MCP endpoint: http://host:port/mcp for streamable HTTP,
	// http://host:port/sse for the legacy HTTP+SSE transport (a path that
	// ends in /sse, or a server that refuses the initialize POST with 400,
	// 404 or 405, is spoken to the legacy way).
	URL *url.URL
	// Header is sent with every request (Authorization...).
	Header http.Header
	// Client is used for every request; nil means a client with a 10 s
	// dial timeout, no proxy and no compression.
	Client *http.Client
}

// Conn is one client session over HTTP, as two pipes.
type Conn struct {
	cfg    Config
	client *http.Client
	ctx    context.Context
	cancel context.CancelFunc
	// getCtx scopes the GET stream, which the client's close ends.
	getCtx    context.Context
	getCancel context.CancelFunc

	out    *io.PipeReader
	outW   *io.PipeWriter
	outMu  sync.Mutex
	wbuf   []byte
	writes sync.Mutex

	mu       sync.Mutex
	session  string
	version  string
	closedW  bool
	closedR  bool
	getOpen  bool
	legacy   bool
	endpoint *url.URL
	// endpointReady is closed once the legacy endpoint is known, or its
	// stream failed (endpoint nil).
	endpointReady chan struct{}
	// noEndpoint says why the legacy stream named no endpoint.
	noEndpoint string
	// owed are the ids of requests POSTed on the legacy transport whose
	// answers have not come on its stream yet. Once the client has closed
	// its side and none is owed, settled is closed and the stream with it,
	// as an SDK client closes its stream when its session ends: a stream
	// left open until the server is stopped holds the server up.
	owed    map[string]bool
	settled chan struct{}
	// legacyEnded is closed once the legacy stream's reader has returned.
	legacyEnded chan struct{}
	// refused is the first 401 or 403 status a request got (see Refused).
	refused string

	posts sync.WaitGroup // POSTs in flight, with their resumptions
	bg    sync.WaitGroup // every goroutine the Conn started
}

// Dial makes a Conn; it does no I/O until the first message is written.
func Dial(cfg Config) (*Conn, error) {
	if cfg.URL == nil || cfg.URL.Host == "" || (cfg.URL.Scheme != "http" && cfg.URL.Scheme != "https") {
		return nil, errors.New("httpconn: the URL must be an http:// or https:// MCP endpoint")
	}
	c := &Conn{cfg: cfg, client: cfg.Client}
	if c.client == nil {
		c.client = &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			DisableCompression:  true,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 16,
		}}
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.getCtx, c.getCancel = context.WithCancel(c.ctx)
	c.out, c.outW = io.Pipe()
	if strings.HasSuffix(cfg.URL.Path, "/sse") {
		c.legacy = true
		c.startLegacy()
	}
	return c, nil
}

// Reader is the server's messages, one per line. Closing it ends the
// Conn: every request is cancelled, and Close returns once every goroutine
// the Conn started has.
func (c *Conn) Reader() io.ReadCloser { return reader{c} }

// Writer takes the client's messages, one per line, each POSTed in its own
// request. Closing it is the client's shutdown: a DELETE ends the session,
// and the reader ends once the POSTs in flight have.
func (c *Conn) Writer() io.WriteCloser { return writer{c} }

type reader struct{ c *Conn }

func (r reader) Read(p []byte) (int, error) { return r.c.out.Read(p) }

func (r reader) Close() error {
	c := r.c
	c.mu.Lock()
	c.closedR, c.closedW = true, true
	c.mu.Unlock()
	c.cancel()
	c.out.Close()
	c.bg.Wait()
	if t, ok := c.client.Transport.(*http.Transport); ok && c.cfg.Client == nil {
		t.CloseIdleConnections()
	}
	return nil
}

type writer struct{ c *Conn }

// errClosed is what a write after the client's close gets.
var errClosed = errors.New("httpconn: the client closed the session")

func (w writer) Write(p []byte) (int, error) {
	c := w.c
	c.writes.Lock()
	defer c.writes.Unlock()
	c.mu.Lock()
	closed := c.closedW
	c.mu.Unlock()
	if closed {
		return 0, errClosed
	}
	c.wbuf = append(c.wbuf, p...)
	for {
		i := bytes.IndexByte(c.wbuf, '\n')
		if i < 0 {
			break
		}
		msg := bytes.TrimSpace(c.wbuf[:i])
		if len(msg) > 0 {
			c.post(append([]byte(nil), msg...))
		}
		c.wbuf = c.wbuf[i+1:]
	}
	return len(p), nil
}

func (w writer) Close() error {
	c := w.c
	c.mu.Lock()
	if c.closedW {
		c.mu.Unlock()
		return nil
	}
	c.closedW = true
	session, legacy, legacyEnded := c.session, c.legacy, c.legacyEnded
	c.mu.Unlock()
	c.goBackground(func() {
		if legacy {
			// The legacy transport's answers come on its one stream: it
			// stays open until none is owed, the server ends it (nothing
			// more can come), or the reader closes.
			c.posts.Wait()
			select {
			case <-c.settle():
			case <-legacyEnded: // nil, and never ready, if it never started
			case <-c.ctx.Done():
				return
			}
			c.getCancel()
			if legacyEnded != nil {
				<-legacyEnded
			}
			c.outW.Close()
			return
		}
		if session != "" {
			c.deleteSession(session)
		}
		c.getCancel()
		c.posts.Wait()
		c.outW.Close()
	})
	return nil
}

// owe notes requests whose answers are to come on the legacy stream.
func (c *Conn) owe(ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owed == nil {
		c.owed = map[string]bool{}
	}
	for _, id := range ids {
		c.owed[id] = true
	}
}

// strike notes that the request id got its answer (or an error in its
// place).
func (c *Conn) strike(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.owed, id)
	if len(c.owed) == 0 && c.settled != nil {
		select {
		case <-c.settled:
		default:
			close(c.settled)
		}
	}
}

// settle returns a channel closed once no answer is owed on the legacy
// stream; it is called once the client has closed its side.
func (c *Conn) settle() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settled == nil {
		c.settled = make(chan struct{})
		if len(c.owed) == 0 {
			close(c.settled)
		}
	}
	return c.settled
}

// goBackground runs f as a goroutine of the Conn, unless it has ended.
func (c *Conn) goBackground(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closedR {
		return false
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		f()
	}()
	return true
}

// deliver writes one message to the reader as a line.
func (c *Conn) deliver(msg []byte) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return
	}
	if bytes.IndexByte(msg, '\n') >= 0 {
		var b bytes.Buffer
		if json.Compact(&b, msg) == nil {
			msg = b.Bytes()
		} else {
			msg = bytes.ReplaceAll(msg, []byte("\n"), []byte(" "))
		}
	}
	c.noteVersion(msg)
	c.outMu.Lock()
	defer c.outMu.Unlock()
	_, _ = c.outW.Write(append(msg, '\n'))
}

// noteVersion learns the protocol version from an initialize result, for
// the MCP-Protocol-Version header of what follows.
func (c *Conn) noteVersion(msg []byte) {
	if !bytes.Contains(msg, []byte(`"protocolVersion"`)) {
		return
	}
	var m struct {
		Result struct {
			ProtocolVersion string          `json:"protocolVersion"`
			ServerInfo      json.RawMessage `json:"serverInfo"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) == nil && m.Result.ProtocolVersion != "" && m.Result.ServerInfo != nil {
		c.mu.Lock()
		c.version = m.Result.ProtocolVersion
		c.mu.Unlock()
	}
}

// headers are the headers of a request carrying body (nil for a GET or a
// DELETE).
func (c *Conn) headers(body []byte) http.Header {
	h := c.cfg.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	c.mu.Lock()
	session, version := c.session, c.version
	c.mu.Unlock()
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	if body != nil {
		if v := messageVersion(body); v != "" {
			version = v
		}
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "application/json, text/event-stream")
		mcpheader.Mirror(h, body, version)
	} else {
		h.Set("Accept", "text/event-stream")
	}
	if version != "" {
		h.Set("MCP-Protocol-Version", version)
	}
	return h
}

// messageVersion is the version a stateless request names in its _meta.
func messageVersion(body []byte) string {
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	return mcpheader.MetaVersion(m.Params)
}

func (c *Conn) deleteSession(session string) {
	ctx, cancel := context.WithTimeout(c.ctx, deleteWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.cfg.URL.String(), nil)
	if err != nil {
		return
	}
	req.Header = c.headers(nil)
	req.Header.Del("Accept")
	req.Header.Set("Mcp-Session-Id", session)
	if resp, err := c.client.Do(req); err == nil {
		drainClose(resp.Body)
	}
}

func drainClose(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxErrorBody))
	body.Close()
}

func retryOf(d time.Duration) time.Duration {
	if d <= 0 {
		return defaultRetry
	}
	return min(d, maxRetry)
}

// mediaType is a response's media type without parameters.
func mediaType(resp *http.Response) string {
	m, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return m
}

// synthesize answers each id with a JSON-RPC error saying why no answer
// can come.
func (c *Conn) synthesize(ids []string, why string) {
	msg, _ := json.Marshal(why)
	for _, id := range ids {
		c.deliver([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`, id, msg)))
		c.strike(id)
	}
}
