package httpchaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/ctxsleep"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Recorder receives the transcript's events in order; *chaos.JSONLRecorder
// is one. Record stamps Seq and T and returns the Seq.
type Recorder interface {
	Record(e wire.Event) int64
	Now() int64
}

// eventRecorder is a Recorder that can record the message of an SSE event
// relayed untouched, received and forwarded, as one pair, from its bytes
// and without classifying it (chaos.JSONLRecorder, transcript format 3):
// a stream's commonest events, and recording them the long way cost more
// than all the rest of relaying them. It records a run of such events read
// together (sse.Reader.PeekRun) as one piece too, as they came, framed only
// when read back (transcript format 4).
type eventRecorder interface {
	RecordRelayedEvent(dir wire.Direction, exchange int64, eventID string, message []byte, at int64) int64
	RecordRelayedEvents(dir wire.Direction, exchange int64, run []byte, n int, at int64) int64
}

// Defaults of Config.
const (
	DefaultMaxBody      = 128 << 20
	DefaultWriteTimeout = 30 * time.Second
	DefaultDialTimeout  = 10 * time.Second
	// closeWait bounds how long Close waits for the exchanges it ended to
	// return: a handler stuck past it is reported, not waited on for ever.
	closeWait = 5 * time.Second
)

// Config is what a proxy session needs. Upstream is required.
type Config struct {
	// Upstream is the MCP endpoint of the server: http://host:port/mcp for
	// streamable HTTP, http://host:port/sse for the legacy transport.
	Upstream *url.URL
	// URLTemplate, for a run on a port of its own ({port}), is the URL as
	// the user wrote it; the session event records it (wire.Event).
	URLTemplate string
	Plan        *faults.Plan
	Recorder    Recorder
	// MaxBody caps a request body and an event, in bytes, so one message
	// cannot take unbounded memory.
	MaxBody int
	// WriteTimeout bounds every write to the client: a client that stops
	// reading its stream cannot hold the proxy for ever.
	WriteTimeout time.Duration
	// Session facts recorded for the judge, as on stdio.
	Tool, Scenario, Role, Repro, Expect string
	Deadline, MaxDeadline               time.Duration
	// HangAfter is a client program's hang horizon (test-client
	// --server-url): see wire.Event.HangAfterMS.
	HangAfter time.Duration
	// Grace is the shutdown ladder's wait, when the run stops the server
	// (test --url -- CMD).
	Grace time.Duration
	// Session, Sessions and Marker say, in a run of several sessions
	// against one server, which session this proxy carries, how many there
	// are, and its client's marker (see wire.Event.Marker).
	Session, Sessions int
	Marker            string
	// Signaller, when the run started the server, sends a signal fault's
	// signal to its process; nil skips signal faults (there is no process
	// of the run's own to signal).
	Signaller Signaller
}

// Signaller sends a signal fault's signal to the server's process.
type Signaller interface {
	// CanSignal says why name (SIGTERM) cannot be sent, "" when it can.
	CanSignal(name string) string
	// Signal sends it, recording the signal under the fault's label.
	Signal(name, label string)
}

// Proxy is one proxy session: from New to Close, every exchange it serves
// is recorded in one transcript under one fault plan.
type Proxy struct {
	cfg      Config
	plan     *faults.Plan
	upstream *http.Client
	rec      Recorder
	evrec    eventRecorder // rec, when it is one

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	active  sync.WaitGroup
	streams map[int64]*stream // open event streams toward the client
	// lastHeaders are the headers of the latest POST the client sent: an
	// injected request toward the server goes with them (session id,
	// protocol version, authorization).
	lastHeaders http.Header
	// lastPost is where the client's latest POST went (the legacy
	// transport's message endpoint, with its session query).
	lastPost   *url.URL
	injectedBy map[string]string // injected request id -> fault label
	// legacyPaths are the paths legacy endpoint events named: a POST there
	// is answered on the GET stream, and its body carries no message.
	legacyPaths map[string]bool
	// forgotten are the sessions a forget-session fault made the upstream
	// forget, by the client's id; forgedFrom maps each forged id back.
	forgotten  map[string]forgery
	forgedFrom map[string]string

	exchanges atomic.Int64
	// era is the wire.Era the client's messages last spoke; probes counts
	// the liveness probes sent.
	era    atomic.Uint32
	probes atomic.Int64
	// running counts the exchanges still being served, and readers of cut
	// exchanges still recording what the server sends.
	running atomic.Int64
	// gates hold a direction stalled until a time (stall); getGate holds
	// the client's standalone GET stream alone (stall:stream=get).
	gates   [3]gate
	getGate gate
	// standaloneIDs are the latest event ids sent on standalone streams: a
	// GET that resumes from one of them reopens the standalone stream, one
	// that resumes from another id resumes a POST's stream.
	standaloneIDs idRing
}

// New starts a proxy session and records its session event. Serve it with
// an http.Server (or httptest), then Close it.
func New(cfg Config) (*Proxy, error) {
	if cfg.Upstream == nil || cfg.Upstream.Host == "" {
		return nil, errors.New("no upstream URL: give the server's MCP endpoint, as in --upstream http://127.0.0.1:3000/mcp")
	}
	if cfg.Upstream.Scheme != "http" && cfg.Upstream.Scheme != "https" {
		return nil, fmt.Errorf("upstream %s: the scheme must be http or https", cfg.Upstream)
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.Plan == nil {
		cfg.Plan = faults.NewPlan(0, nil)
	}
	if err := CheckPlan(cfg.Plan); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		cfg:  cfg,
		plan: cfg.Plan,
		rec:  cfg.Recorder,
		upstream: &http.Client{
			Transport: &http.Transport{
				Proxy:       nil, // the upstream is the peer, never an HTTP proxy's
				DialContext: (&net.Dialer{Timeout: DefaultDialTimeout}).DialContext,
				// Bodies must arrive as the server wrote them, to be framed.
				DisableCompression:  true,
				TLSHandshakeTimeout: DefaultDialTimeout,
				MaxIdleConnsPerHost: 64,
				IdleConnTimeout:     90 * time.Second,
			},
			// A redirect is the client's to follow, as without the proxy.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		ctx:        ctx,
		cancel:     cancel,
		streams:    map[int64]*stream{},
		injectedBy: map[string]string{},
	}
	if p.rec != nil {
		p.plan.SetClock(func() time.Duration { return time.Duration(p.rec.Now()) * time.Microsecond })
	}
	p.recordStart()
	p.evrec, _ = cfg.Recorder.(eventRecorder)
	return p, nil
}

func (p *Proxy) recordStart() {
	if p.rec == nil {
		return
	}
	seed := p.plan.Seed()
	e := wire.Event{Type: wire.EventSession, Tool: p.cfg.Tool, Format: wire.TranscriptFormat, Scenario: p.cfg.Scenario, Role: p.cfg.Role,
		Repro: p.cfg.Repro, Expect: p.cfg.Expect, DeadlineMS: p.cfg.Deadline.Milliseconds(),
		MaxDeadlineMS: p.cfg.MaxDeadline.Milliseconds(), GraceMS: p.cfg.Grace.Milliseconds(), HangAfterMS: p.cfg.HangAfter.Milliseconds(), URL: p.cfg.Upstream.String(), Seed: &seed,
		Session: p.cfg.Session, Sessions: p.cfg.Sessions, Marker: p.cfg.Marker, URLTemplate: p.cfg.URLTemplate,
		WallStartUnixNano: time.Now().UnixNano() - p.rec.Now()*1000}
	for _, f := range p.plan.Faults() {
		e.Faults = append(e.Faults, f.Spec)
	}
	p.rec.Record(e)
}

// Close ends the session: open streams are cut, exchanges still running are
// given up to 5 s to return, and the session-end event is recorded. It is
// safe to call more than once.
func (p *Proxy) Close(why string) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	done := make(chan struct{})
	go func() { p.active.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-time.After(closeWait):
		err = fmt.Errorf("%d exchange(s) still running %s after the session ended", p.running.Load(), closeWait)
		p.record(wire.Event{Type: wire.EventError, Detail: err.Error()})
	}
	p.upstream.CloseIdleConnections()
	if why == "" {
		why = "the proxy was stopped"
	}
	p.record(wire.Event{Type: wire.EventSessionEnd, Detail: why})
	return err
}

// enter registers an exchange, unless the session has ended; leave ends it.
func (p *Proxy) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.active.Add(1)
	p.running.Add(1)
	return true
}

func (p *Proxy) leave() {
	p.running.Add(-1)
	p.active.Done()
}

// injecting notes the fault that injects m, when m is a request whose
// answer the proxy must swallow.
func (p *Proxy) injecting(m *wire.Message, label string) {
	if m.Kind != wire.Request || !strings.HasPrefix(m.ID, wire.InjectIDPrefix) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.injectedBy[m.ID] = label
}

// injector says who injected the request an answer with id answers, and
// forgets it: the map holds only requests still unanswered.
func (p *Proxy) injector(id string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	label, ok := p.injectedBy[id]
	if !ok {
		return "of mcpchaos"
	}
	delete(p.injectedBy, id)
	return "by fault " + label
}

// ServeHTTP relays one exchange between the client and the upstream.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.enter() {
		http.Error(w, "mcpchaos proxy: the session has ended", http.StatusServiceUnavailable)
		return
	}
	defer p.leave()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	x := &exchange{p: p, n: p.exchanges.Add(1), w: w, r: r.WithContext(ctx), ctx: ctx,
		line: r.Method + " " + r.URL.RequestURI(), session: r.Header.Get("Mcp-Session-Id")}
	if r.Method == http.MethodGet {
		last := r.Header.Get("Last-Event-ID")
		x.standalone = last == "" || p.standaloneIDs.has(last)
	}
	p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, HTTP: x.line, MCPSession: x.session,
		Detail: describeRequest(r), Standalone: x.standalone})
	defer x.endUpstream()
	defer func() {
		// A fault that cuts the connection aborts the handler; anything
		// else that panics is a bug of ours, recorded before it goes on.
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				p.record(wire.Event{Type: wire.EventError, Exchange: x.n, HTTP: x.line, Detail: fmt.Sprintf("mcpchaos proxy bug: %v", v)})
			}
			panic(http.ErrAbortHandler)
		}
	}()
	switch r.Method {
	case http.MethodPost:
		x.post()
	default:
		x.relay()
	}
}

func describeRequest(r *http.Request) string {
	var parts []string
	for _, h := range []string{"Content-Type", "Accept", "MCP-Protocol-Version", "Last-Event-ID"} {
		if v := r.Header.Get(h); v != "" {
			parts = append(parts, h+": "+v)
		}
	}
	if r.Header.Get("Authorization") != "" {
		parts = append(parts, "Authorization: (passed on, not recorded)")
	}
	return strings.Join(parts, "; ")
}

// weighs says whether the plan has a say in the messages travelling in
// dir: it has faults and watches dir. One that does not watch dir decides
// the same without seeing them (faults.Plan.Watches), so they cost it
// nothing: a plan on the client's requests leaves the server's events alone.
func (p *Proxy) weighs(dir wire.Direction) bool {
	return !p.plan.Empty() && p.plan.Watches(dir)
}

func (p *Proxy) record(e wire.Event) int64 {
	if p.rec == nil {
		return 0
	}
	return p.rec.Record(e)
}

// legacyEndpoint notes the path an endpoint event named.
func (p *Proxy) legacyEndpoint(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.legacyPaths == nil {
		p.legacyPaths = map[string]bool{}
	}
	if len(p.legacyPaths) < 64 {
		p.legacyPaths[path] = true
	}
}

// legacyPost says whether r was sent to the legacy transport's message
// endpoint.
func (p *Proxy) legacyPost(r *http.Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return r.Method == http.MethodPost && p.legacyPaths[r.URL.Path]
}

// target is where an exchange goes upstream: the upstream's own endpoint
// for "/" and for its path, the same path on the upstream's host for any
// other (the legacy transport's message endpoint).
func (p *Proxy) target(r *http.Request) *url.URL {
	u := *p.cfg.Upstream
	if r.URL.Path != "/" && r.URL.Path != "" && r.URL.Path != u.Path {
		u.Path, u.RawPath = r.URL.Path, r.URL.RawPath
	}
	if r.URL.RawQuery != "" {
		u.RawQuery = r.URL.RawQuery
	}
	return &u
}

// gate holds one direction until a time: a stall. The zero gate is open.
type gate struct {
	// armed says a stall was ever set: until then the gate is open
	// without a look at the clock, which every event of a stream asks.
	armed   atomic.Bool
	mu      sync.Mutex
	until   time.Time
	forever bool
}

func (g *gate) set(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed.Store(true)
	if d == 0 {
		g.forever = true
		return
	}
	if t := time.Now().Add(d); t.After(g.until) {
		g.until = t
	}
}

// closed says the gate holds its direction now.
func (g *gate) closed() bool {
	if !g.armed.Load() {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.forever || time.Now().Before(g.until)
}

// wait holds until the gate opens; false when ctx ended first.
func (g *gate) wait(ctx context.Context) bool {
	if !g.armed.Load() {
		return true
	}
	g.mu.Lock()
	forever, until := g.forever, g.until
	g.mu.Unlock()
	if forever {
		<-ctx.Done()
		return false
	}
	return ctxsleep.Sleep(ctx, time.Until(until))
}

// idRing holds the latest event ids of standalone streams, a bounded few:
// a client resumes from the last id it got, which is among the latest.
type idRing struct {
	mu   sync.Mutex
	ids  [64]string
	next int
}

func (r *idRing) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids[r.next] = id
	r.next = (r.next + 1) % len(r.ids)
}

func (r *idRing) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.ids {
		if s == id {
			return true
		}
	}
	return false
}

// Exchanges counts the HTTP exchanges of the session so far: the client's,
// and those mcpchaos made (injections, probes).
func (p *Proxy) Exchanges() int64 { return p.exchanges.Load() }

// WaitIdle waits at most d for the exchanges still running to return, and
// says whether they all did. Once the client has closed its connections,
// this is the proxy passing their end on to the upstream: a server stopped
// before that still has its client, and one that waits for its open
// streams on SIGTERM would be blamed for the proxy's slowness.
func (p *Proxy) WaitIdle(d time.Duration) bool {
	const tick = 5 * time.Millisecond
	for deadline := time.Now().Add(d); p.running.Load() > 0; {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(tick)
	}
	return true
}

// HangUpIdle closes the proxy's idle connections to the server, as a client
// that is done would. A connection the proxy dialed but never sent a
// request on is new to the server, and Go's http.Server.Shutdown, for one,
// waits up to 5 s for such a connection before it lets go of it: a server
// stopped with them open would be blamed for the proxy's keep-alive.
func (p *Proxy) HangUpIdle() { p.upstream.CloseIdleConnections() }
