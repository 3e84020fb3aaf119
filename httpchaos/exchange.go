package httpchaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// exchange is one HTTP request the client sent through the proxy, and the
// upstream's response to it.
type exchange struct {
	p   *Proxy
	n   int64
	w   http.ResponseWriter
	r   *http.Request
	ctx context.Context
	// up is the context of the upstream request: it ends with ctx, unless
	// a fault cut the client's connection and the server's answer is still
	// to be read into the record (detach).
	up       context.Context
	upCancel context.CancelFunc
	upStop   func() bool
	// detached says the upstream's body was handed to a reader that
	// outlives the handler (cut): the handler must not close it.
	detached bool
	line     string
	// session is the Mcp-Session-Id the request carried.
	session string
	// standalone marks a GET for the client's stream of the server's own
	// messages, not the resumption of a POST's stream (see
	// wire.Event.Standalone).
	standalone bool
	// request is the seq of the request the client POSTed, 0 for any
	// other message: an HTTP error status answers it.
	request int64
	// answer is the seq of the client's answer (to one of the server's
	// requests) it POSTed: an HTTP error status refuses it, and the
	// server never got it.
	answer int64
	// step is the plan's step of the request the client POSTed, when the
	// plan weighed it: the answers on this exchange answer it
	// (Plan.ReceiveOn), and a refusal tells the plan the server never held
	// it (Plan.Refused).
	step *faults.Step

	mu sync.Mutex
	// stream is set once the response is an event stream being relayed;
	// pending are injections toward the client that wait for it.
	stream  *stream
	pending []labelled
	// answered is set once the response head was written.
	answered bool

	// deadline is when the write deadline last set runs out; only the
	// writer holding the stream's lock (or the one handler goroutine,
	// before a stream opens) touches it.
	deadline time.Time
	rc       *http.ResponseController

	// holdBy is the fault holding the response head, for holdFor (0: until
	// the exchange ends); only the handler goroutine touches them.
	holdBy  string
	holdFor time.Duration
}

type labelled struct {
	label string
	inj   faults.Injection
	cause int64
}

// hopHeaders are a single connection's, never passed on (RFC 9110, 7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// copyHeaders copies src's headers but the hop-by-hop ones into dst. The
// values are shared, capped so that an Add to either side copies them
// first; nothing changes a header's value in place.
func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = vs[:len(vs):len(vs)]
	}
	for _, h := range hopHeaders {
		delete(dst, h) // the names are canonical
	}
}

func (x *exchange) recordMessage(typ string, dir wire.Direction, m *wire.Message, eventID, fault string, of int64) int64 {
	if x.p.rec == nil {
		return 0
	}
	e := wire.Event{Type: typ, Exchange: x.n, EventID: eventID, Fault: fault, Of: of}
	e.SetMessage(dir, m)
	return x.p.rec.Record(e)
}

func (x *exchange) recordRef(typ string, dir wire.Direction, of int64, detail string) {
	x.p.record(wire.Event{Type: typ, Dir: dir.String(), Of: of, Detail: detail, Exchange: x.n})
}

// forwarded records that the message of event of went on; with a note, the
// bytes written differ from those received (an id fault), and are recorded.
func (x *exchange) forwarded(dir wire.Direction, raw []byte, of int64, note string) {
	if note == "" {
		x.recordRef(wire.EventForwarded, dir, of, "")
		return
	}
	m := wire.Classify(raw)
	e := wire.Event{Type: wire.EventForwarded, Of: of, Detail: note, Exchange: x.n}
	e.SetMessage(dir, &m)
	x.p.record(e)
}

// post relays a POST: one message from the client, and the upstream's
// answer to it (202, a JSON body, or an event stream).
func (x *exchange) post() {
	p := x.p
	body, err := readLimited(x.r.Body, p.cfg.MaxBody)
	if err != nil {
		p.record(wire.Event{Type: wire.EventError, Exchange: x.n, HTTP: x.line, Dir: wire.ToServer.String(), Detail: "reading the client's request body: " + err.Error()})
		http.Error(x.w, "mcpchaos proxy: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	m := wire.Classify(body)
	seq := x.recordMessage(wire.EventReceived, wire.ToServer, &m, "", "", 0)
	switch m.Kind {
	case wire.Request:
		x.request = seq
	case wire.Response, wire.Error:
		x.answer = seq
	}
	p.mu.Lock()
	// Kept, not copied: nothing writes a request's headers once its
	// handler has it, and what reads them later copies them first.
	p.lastHeaders = x.r.Header
	p.lastPost = x.r.URL
	p.mu.Unlock()
	if m.Era != wire.EraUnknown {
		// The latest word wins, as on stdio: a client may try
		// server/discover and fall back to initialize.
		p.era.Store(uint32(m.Era))
	}
	if m.IsAnswer() && (strings.HasPrefix(m.ID, wire.InjectIDPrefix) || strings.HasPrefix(m.ID, wire.ProbeIDPrefix)) {
		// The server never asked: it must not see the answer.
		why := "the answer to a liveness probe of mcpchaos"
		if strings.HasPrefix(m.ID, wire.InjectIDPrefix) {
			why = "the answer to a request injected " + p.injector(m.ID)
		}
		x.recordRef(wire.EventDropped, wire.ToServer, seq, why)
		x.w.WriteHeader(http.StatusAccepted)
		p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: http.StatusAccepted, ByUs: true, Detail: "answered by mcpchaos, not the upstream"})
		return
	}
	raw, note := body, ""
	var step *faults.Step
	var o outcome
	if p.weighs(wire.ToServer) {
		step = p.plan.Receive(wire.ToServer, &m)
		if m.Kind == wire.Request {
			x.step = step
		}
		o = x.apply(p.plan.Decide(faults.Before, step), wire.ToServer, seq, false)
		if step.Rewritten != nil {
			raw, note = step.Rewritten, step.RewriteNote
		}
		if o.Rewrite != nil {
			raw, note = o.Rewrite, "rewritten by fault "+o.RewriteBy
		}
	}
	if x.answeredByFault(o, wire.ToServer, seq, "before the message was sent on") {
		return
	}
	switch {
	case o.Dropped != "":
		x.recordRef(wire.EventDropped, wire.ToServer, seq, o.Dropped)
		x.unheld("it was never sent on: " + o.Dropped)
		x.withheld(&m)
		return
	case o.ReplaceBy != "":
		x.recordRef(wire.EventDropped, wire.ToServer, seq, "replaced by fault "+o.ReplaceBy)
		rm := wire.Classify(o.Replace)
		raw, note = o.Replace, ""
		x.recordMessage(wire.EventInjected, wire.ToServer, &rm, "", o.ReplaceBy, seq)
	}
	if !x.passStall(wire.ToServer, seq) {
		return
	}
	req, err := x.upstreamRequest(x.r.Method, raw, x.r.Header)
	if err != nil {
		x.badGateway(seq, err)
		return
	}
	if o.forgeBy != "" {
		x.forgeOrigin(req, &m, o.forge, o.forgeBy)
	}
	if o.ReplaceBy == "" {
		x.forwarded(wire.ToServer, raw, seq, note)
	}
	if step != nil {
		// After the forwarded event: see faults/landing.go.
		p.missed(p.plan.Delivered(step, seq), x.n)
	}
	resp, err := p.upstream.Do(req)
	if err != nil {
		if x.ctx.Err() != nil {
			// The request went on and the server held it without a word
			// until the client gave up: unanswered, not undelivered (a
			// drop here hid closed-session's POST keyed by id, held forever
			// under id-collision, from the hang it is).
			x.endedUnanswered()
			return
		}
		x.badGateway(seq, err)
		return
	}
	if step != nil {
		if after := x.apply(p.plan.Decide(faults.After, step), wire.ToServer, seq, true); after.cutBy != "" {
			// An answer the server sent whole as a body is done with: the
			// cut ends nothing of the server's, and the record keeps it.
			keep := after.keepServer || !isEventStream(resp)
			// The server's answer came before the cut: its status is in
			// the record as the client would have got it (a 400 refusing
			// the exchange, recorded without it, left the refusal's
			// id-null error looking like an answer to nothing).
			x.recordHead(resp)
			x.cut(after.cutBy, after.reset, keep, func() { x.swallow(resp, "the client's connection was "+cutWord(after.reset)+" by fault "+after.cutBy) })
		}
	}
	defer x.closeBody(resp)
	x.respond(resp)
}

func (x *exchange) closeBody(resp *http.Response) {
	if !x.detached {
		resp.Body.Close()
	}
}

// passStall waits while a stall holds dir; when the exchange or session
// ends first, the message of event seq is recorded as never delivered.
func (x *exchange) passStall(dir wire.Direction, seq int64) bool {
	if x.p.gates[dir].wait(x.ctx) {
		return true
	}
	x.recordRef(wire.EventDropped, dir, seq, "the session ended while this direction was stalled")
	return false
}

// withheld answers the client as the server would had a dropped message
// been lost on the way: a notification or response was accepted (202); a
// request stays unanswered until the client gives up or the session ends.
func (x *exchange) withheld(m *wire.Message) {
	if m.Kind != wire.Request {
		x.w.WriteHeader(http.StatusAccepted)
		x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: http.StatusAccepted, ByUs: true, Detail: "answered by mcpchaos: the message was not sent on"})
		return
	}
	<-x.ctx.Done()
	x.endedUnanswered()
}

// endedUnanswered records that the exchange's request got no answer before
// the client or the session went.
func (x *exchange) endedUnanswered() {
	x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Detail: "ended unanswered: " + ended(x)})
}

// ended says why an exchange's context ended.
func ended(x *exchange) string {
	if x.p.ctx.Err() != nil {
		return "the session ended"
	}
	return "the client closed the connection"
}

func (x *exchange) badGateway(seq int64, err error) {
	if x.ctx.Err() != nil {
		x.recordRef(wire.EventDropped, wire.ToServer, seq, "not sent on: "+ended(x))
		return
	}
	detail := "the upstream could not be reached: " + err.Error()
	x.p.record(wire.Event{Type: wire.EventError, Exchange: x.n, HTTP: x.line, Detail: detail})
	if seq != 0 && neverConnected(err) {
		// The server never had the message: a request sent to a server
		// that has died is not one it left unanswered.
		x.recordRef(wire.EventDropped, wire.ToServer, seq, "not sent on: no connection to the upstream could be made")
		x.unheld("it was never sent on: no connection to the upstream could be made")
	}
	http.Error(x.w, "mcpchaos proxy: "+detail, http.StatusBadGateway)
}

// neverConnected reports whether err is a failure to connect to the
// upstream (nothing listens, no route), after which no byte of the request
// can have reached it; a connection that failed after it was made may have
// carried the request.
func neverConnected(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (x *exchange) upstreamRequest(method string, body []byte, h http.Header) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	// The target is a URL already: made from "", the request parses none.
	req, err := http.NewRequestWithContext(x.upstreamContext(), method, "", rd)
	if err != nil {
		return nil, err
	}
	req.URL = x.p.target(x.r)
	req.Host = req.URL.Host
	copyHeaders(req.Header, h)
	x.sendForged(req.Header)
	if x.r.Host != "" && !namesProxy(x.r) {
		// A Host that is not the proxy's own address is what the client
		// really sent (a DNS-rebinding probe's forged host, a virtual
		// host): the server must see it to judge it. The proxy's own
		// address means the upstream, as in any reverse proxy.
		req.Host = x.r.Host
	}
	// Bodies must come back as the server wrote them, to be framed.
	req.Header.Del("Accept-Encoding")
	if body == nil && x.r.Body != nil && method != http.MethodPost {
		req.Body, req.ContentLength = x.r.Body, x.r.ContentLength
	}
	return req, nil
}

// endUpstream lets go of the upstream context once the exchange is over,
// unless a reader of what the server still sends (detached) holds it.
func (x *exchange) endUpstream() {
	if x.upStop != nil && !x.detached {
		x.upStop()
		x.upCancel()
	}
}

// upstreamContext is the exchange's upstream context, made on first use.
func (x *exchange) upstreamContext() context.Context {
	if x.up == nil {
		x.up, x.upCancel = context.WithCancel(x.p.ctx)
		x.upStop = context.AfterFunc(x.ctx, x.upCancel)
	}
	return x.up
}

// flush sends on what the exchange's event stream has queued, if it has one.
func (x *exchange) flush() {
	x.mu.Lock()
	st := x.stream
	x.mu.Unlock()
	if st != nil {
		st.flush()
	}
}

// cut ends the client's connection now, as fault label decided. A real
// network cut ends both sides, so by default the server's side of the
// exchange closes too: the server sees its client leave, and what it still
// had to send there never arrives. With keep (server=read), the server's
// side stays open and rest reads what it still sends into the record
// (dropped), so the judge sees the server answer although the client
// never can.
func (x *exchange) cut(label string, reset, keep bool, rest func()) {
	x.mu.Lock()
	st := x.stream
	x.mu.Unlock()
	if st != nil {
		st.flush() // what went on before the cut reaches the client
		// The reader of the rest writes nothing: the handler is gone.
		st.end(errCut)
	}
	how := "connection cut"
	if reset {
		how = x.reset()
	}
	sides := wire.CutClient
	switch {
	case keep && rest != nil && x.upStop != nil && x.upStop() && x.p.enter():
		x.detached = true
		how += " by fault " + label + "; the server's side stays open, read into the record"
		go func() {
			defer x.p.leave()
			defer x.upCancel()
			rest()
		}()
	case x.closeUpstream():
		sides = wire.CutBoth
		how += " by fault " + label + "; the server's side closed too"
	default:
		how += " by fault " + label
	}
	x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Fault: label, Cut: sides, Detail: how})
	panic(http.ErrAbortHandler)
}

// closeUpstream closes the server's side of the exchange, and says whether
// one was open: the upstream request is cancelled, which closes its
// connection, as the client's going would.
func (x *exchange) closeUpstream() bool {
	if x.upCancel == nil {
		return false
	}
	x.upCancel()
	return true
}

// isEventStream says whether resp is an event stream.
func isEventStream(resp *http.Response) bool {
	return mediaType(resp.Header.Get("Content-Type")) == "text/event-stream"
}

// mediaType is a Content-Type's media type, lower case, without its
// parameters: for the types the proxy tells apart, what mime.ParseMediaType
// says, without the parameters it would parse and the proxy never reads.
func mediaType(ct string) string {
	media, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(media))
}

// relay passes an exchange other than a POST on (GET opens the server's
// stream, DELETE ends the session), and relays the response.
func (x *exchange) relay() {
	req, err := x.upstreamRequest(x.r.Method, nil, x.r.Header)
	if err != nil {
		x.badGateway(0, err)
		return
	}
	resp, err := x.p.upstream.Do(req)
	if err != nil {
		x.badGateway(0, err)
		return
	}
	defer x.closeBody(resp)
	x.respond(resp)
}

// respond relays the upstream's response head, then its body by kind.
func (x *exchange) respond(resp *http.Response) {
	p := x.p
	x.recordHead(resp)
	if !x.holdHead(resp) {
		return
	}
	copyHeaders(x.w.Header(), resp.Header)
	p.unforge(x.w.Header())
	switch media := mediaType(resp.Header.Get("Content-Type")); {
	case media == "text/event-stream":
		x.relayStream(resp)
	case media == "application/json" && resp.StatusCode < 300 && !p.legacyPost(x.r):
		x.relayJSON(resp)
	default:
		x.relayOpaque(resp)
	}
}

// recordHead records the head of the server's response, and what an error
// status says of the exchange's request: answered (4xx) or failed (5xx).
// It holds whether or not the client gets the response.
func (x *exchange) recordHead(resp *http.Response) {
	p := x.p
	ct := resp.Header.Get("Content-Type")
	head := wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: resp.StatusCode,
		MCPSession: resp.Header.Get("Mcp-Session-Id"), Detail: "response: " + orNone(ct)}
	switch {
	case resp.StatusCode >= 400 && x.request != 0:
		head.Of = x.request
		head.Detail += "; the error status answers the request"
	case resp.StatusCode >= 400 && x.answer != 0:
		head.Of = x.answer
		head.Detail += "; the error status refuses the client's answer"
	}
	p.record(head)
	switch {
	case resp.StatusCode >= 500 && x.step != nil:
		// The server failed the request: it held it until now.
		p.plan.Failed(x.step)
	case resp.StatusCode >= 400 && x.request != 0:
		x.unheld(fmt.Sprintf("the server answered it HTTP %d", resp.StatusCode))
	}
}

func orNone(s string) string {
	if s == "" {
		return "no content type"
	}
	return s
}

// relayOpaque passes a body that carries no message on as it came (202,
// an error page), recording it so that nothing the server sent is lost.
// On the legacy transport every server message comes on the GET stream,
// and a client reads no POST's body: a server that echoes the answer there
// too (mcp-go 0.20 does) has not answered twice.
func (x *exchange) relayOpaque(resp *http.Response) {
	body, err := readLimited(resp.Body, x.p.cfg.MaxBody)
	x.w.Header().Del("Content-Length")
	x.w.WriteHeader(resp.StatusCode)
	if len(body) > 0 {
		x.write(body)
		detail := "response body"
		if x.p.legacyPost(x.r) {
			detail += " (of a POST to the legacy transport's message endpoint: its messages come on the GET stream, and a client does not read this)"
		}
		e := wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: resp.StatusCode, Detail: detail}
		e.SetRaw(body)
		x.p.record(e)
	}
	if err != nil {
		x.p.record(wire.Event{Type: wire.EventError, Exchange: x.n, Detail: "reading the upstream's response: " + err.Error()})
	}
	x.injectPending("the response carries no event stream")
}

// relayJSON relays a response holding one message as a JSON body.
func (x *exchange) relayJSON(resp *http.Response) {
	p := x.p
	body, err := readLimited(resp.Body, p.cfg.MaxBody)
	if err != nil {
		p.record(wire.Event{Type: wire.EventError, Exchange: x.n, Dir: wire.ToClient.String(), Detail: "reading the upstream's response: " + err.Error()})
		if len(body) == 0 {
			panic(http.ErrAbortHandler)
		}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		// A 202 Accepted that names a JSON content type carries no message
		// (the Python SDK's answer to a notification): nothing to frame.
		x.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		x.w.WriteHeader(resp.StatusCode)
		_ = x.write(body)
		p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: resp.StatusCode, Detail: "an empty body: no message"})
		x.injectPending("the response carries no message")
		return
	}
	m := wire.Classify(body)
	var step *faults.Step
	if p.weighs(wire.ToClient) && len(body) > 0 {
		step = p.plan.ReceiveOn(wire.ToClient, &m, x.step) // before the record: see faults/landing.go
	}
	seq := x.recordMessage(wire.EventReceived, wire.ToClient, &m, "", "", 0)
	raw, note := body, ""
	var o outcome
	if step != nil {
		o = x.apply(p.plan.Decide(faults.Before, step), wire.ToClient, seq, false)
		if step.Rewritten != nil {
			raw, note = step.Rewritten, step.RewriteNote
		}
	}
	if x.answeredByFault(o, wire.ToClient, seq, "before this answer") {
		return
	}
	switch {
	case o.Dropped != "":
		x.recordRef(wire.EventDropped, wire.ToClient, seq, o.Dropped)
		<-x.ctx.Done()
		p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Detail: "ended unanswered: " + ended(x)})
		return
	case o.ReplaceBy != "":
		x.recordRef(wire.EventDropped, wire.ToClient, seq, "replaced by fault "+o.ReplaceBy)
		rm := wire.Classify(o.Replace)
		x.recordMessage(wire.EventInjected, wire.ToClient, &rm, "", o.ReplaceBy, seq)
		raw = o.Replace
	}
	if !x.passStall(wire.ToClient, seq) || !x.holdHead(resp) {
		return
	}
	x.w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	x.w.WriteHeader(resp.StatusCode)
	// Not flushed: the handler returns next and the server writes the
	// head and the body in one go, unless a fault acts after it, which
	// needs the client to have the answer first.
	if err := x.send(nil, raw, false); err != nil {
		x.recordRef(wire.EventDropped, wire.ToClient, seq, "writing to the client failed: "+err.Error())
		return
	}
	if o.ReplaceBy == "" {
		x.forwarded(wire.ToClient, raw, seq, note)
	}
	x.injectPending("the answer came as a JSON body, not an event stream")
	if step == nil {
		return
	}
	if after := p.plan.Decide(faults.After, step); len(after) > 0 {
		if err := x.send(nil, nil, true); err != nil {
			x.recordRef(wire.EventDropped, wire.ToClient, seq, "writing to the client failed: "+err.Error())
			return
		}
		x.apply(after, wire.ToClient, seq, true)
	}
}

// write writes to the client with a deadline, flushing.
func (x *exchange) write(b []byte) error { return x.send(nil, b, true) }

// send writes the pieces, then b, to the client with a deadline, flushing
// when asked: the relay of a stream leaves the flush to the moment it would
// wait on the server (see relayStream), so a burst of events costs one.
func (x *exchange) send(pieces [][]byte, b []byte, flush bool) error {
	if x.rc == nil {
		x.rc = http.NewResponseController(x.w)
	}
	// Setting a deadline reschedules a runtime timer: per event of a fast
	// stream it cost more than the write. It is renewed once a tenth of
	// it has passed, so a write still fails within WriteTimeout, and not
	// before nine tenths of it.
	timeout := x.p.cfg.WriteTimeout
	if now := time.Now(); x.deadline.Sub(now) < timeout-timeout/10 {
		x.deadline = now.Add(timeout)
		_ = x.rc.SetWriteDeadline(x.deadline)
	}
	for _, piece := range pieces {
		if _, err := x.w.Write(piece); err != nil {
			return err
		}
	}
	if len(b) > 0 {
		if _, err := x.w.Write(b); err != nil {
			return err
		}
	}
	if !flush {
		return nil
	}
	if err := x.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// answeredByFault carries out the faults that take the message's place
// toward the client: a cut or reset connection (which ends the handler),
// or an error status. The message, of event seq, is recorded as dropped;
// true when the exchange is over.
func (x *exchange) answeredByFault(o outcome, dir wire.Direction, seq int64, when string) bool {
	switch {
	case dir != wire.ToServer:
	case o.cutBy != "":
		x.unheld("it was never sent on: fault " + o.cutBy + " " + cutWord(o.reset) + " the client's connection")
	case o.statusBy != "":
		x.unheld(fmt.Sprintf("it was never sent on: fault %s answered the client HTTP %d", o.statusBy, o.status))
	}
	switch {
	case o.cutBy != "":
		x.recordRef(wire.EventDropped, dir, seq, "the client's connection was "+cutWord(o.reset)+" by fault "+o.cutBy+" "+when)
		x.cut(o.cutBy, o.reset, o.keepServer, nil)
	case o.statusBy != "":
		x.recordRef(wire.EventDropped, dir, seq, fmt.Sprintf("the client got HTTP %d from fault %s instead", o.status, o.statusBy))
		x.answerStatus(o.status, o.statusBy)
		return true
	}
	return false
}

// unheld tells the plan that the server never held the request of this
// exchange, and why (see faults.Plan.Refused), and records the firings that
// therefore did not land.
func (x *exchange) unheld(why string) {
	if x.step != nil {
		x.p.missed(x.p.plan.Refused(x.step, why), x.n)
	}
}

// missed records the firings of the plan that did not land (faults.Miss),
// on exchange n.
func (p *Proxy) missed(ms []faults.Miss, n int64) {
	for _, m := range ms {
		p.record(wire.Event{Type: wire.EventFault, Fault: m.Label, Spec: m.Fault.Spec, Action: m.Fault.Family.Name,
			Detail: m.Detail, Of: m.Of, Exchange: n})
	}
}

// cutWord says how a fault ended the client's connection.
func cutWord(reset bool) string {
	if reset {
		return "reset"
	}
	return "cut"
}

func readLimited(r io.Reader, max int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if len(b) > max {
		return b[:max], fmt.Errorf("body longer than the %d-byte cap", max)
	}
	return b, err
}

// namesProxy says whether r's Host names the address r reached the proxy
// on: a loopback name or the listening IP, with the listening port.
func namesProxy(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if !ok {
		return true
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, "80"
		if r.TLS != nil {
			port = "443"
		}
	}
	if port != strconv.Itoa(local.Port) {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && (ip.IsLoopback() || ip.Equal(local.IP))
}
