package httpchaos

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/ctxsleep"
	"github.com/mcpchaos/mcpchaos/internal/mcpheader"
	"github.com/mcpchaos/mcpchaos/internal/sse"
	"github.com/mcpchaos/mcpchaos/wire"
)

// httpMeaning says, per fault family, what it does on HTTP. A family not
// listed has no HTTP meaning yet and is refused by CheckPlan.
var httpMeaning = map[string]string{
	"delay":          "holds the message before it goes on",
	"drop":           "withholds the message: a request's POST stays unanswered, an event is left out of its stream",
	"duplicate":      "writes a server's event again into its stream (a client's POST is not sent twice: skipped)",
	"corrupt":        "sends the mangled message in place of the original",
	"eof":            "cuts the connection or event stream carrying the message, after it (by default) or before it, at both ends as a network cut does (server=read: the server's side stays open, read into the record); stream=get cuts the client's GET stream instead",
	"stall":          "stops reading the direction: the upstream's streams are not read, the client's POSTs not sent on (stream=get: the GET stream alone)",
	"burst":          "injects notifications: toward the client into an open event stream, toward the server as POSTs",
	"list-changed":   "injects a list_changed notification into an open event stream (stream=get: the GET stream only)",
	"server-request": "injects a server-to-client request into an open event stream; the client's answer is swallowed",
	"cancel":         "injects notifications/cancelled: toward the server as a POST",
	"early-request":  "POSTs a request, with the session id initialize gave, before the client's notifications/initialized goes on",
	"id-type":        "sends the request on with its id's type changed; the answer is translated back",
	"mutate":         "sends the client's POST on with one field of its message dropped, null, retyped or lengthened; the server's messages are not changed",
	"id-collision":   "sends the request on with the id of another the server holds (a request it refused with a 4xx holds none); each answer is translated back to the request of its exchange",
	"oversize":       "pads the message under _meta",
	"fragment":       "writes a server's event in pieces, flushing each",
	"http-error":     "answers the client's POST with the error status in the server's place; on a server's JSON answer, answers with the status instead (not once an event stream has begun)",
	"reset":          "resets the client's connection (TCP RST) carrying the message; the server's side of it closes too (server=read: read into the record); stream=get resets the GET stream instead",
	"end-session":    "sends the server a DELETE with the client's Mcp-Session-Id, as if the session expired; the client is not told",
	"forget-session": "sends the client's requests on with an Mcp-Session-Id the server never issued, from then on, as if the server forgot the session; a new session passes",
	"hold-headers":   "holds the head of the server's answer before it goes to the client",
	"event-id-reuse": "sends a server's event with the id of the event before it in the same stream",
	"credentials":    "POSTs the server, on exchanges of its own, requests with the client's credentials removed, malformed or made up (a handshake each), and pings in the client's session without them or with made-up ones; a session one opens is ended (DELETE); the client is not told",
	"forge-origin":   "sends the client's own POST on with a foreign Host, a foreign Origin, Origin: null, or both, in place of its own; the client gets what the server answered",
	"foreign-origin": "POSTs the server, on exchanges of its own with the client's credentials, the handshake of a page of a foreign site (a foreign Host, a foreign Origin, Origin: null, or both), and ends (DELETE) a session one opens; the client is not told",
	"signal":         "sends TERM, INT or KILL to the server's process group when mcpchaos started it (test --url URL -- CMD), as a supervisor or an OOM killer would, every session's calls in flight; skipped for a server it did not start, and STOP is not sent",
}

// Supports says whether a fault family has an HTTP meaning, and if not
// which families do.
func Supports(family string) error {
	if _, ok := httpMeaning[family]; ok {
		return nil
	}
	return fmt.Errorf("fault %s has no meaning on HTTP in mcpchaos yet; the HTTP faults are %s", family, strings.Join(Families(), ", "))
}

// Families lists the fault families that work on HTTP, sorted.
func Families() []string {
	out := make([]string, 0, len(httpMeaning))
	for f := range httpMeaning {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Meaning is what family does on HTTP, "" for a family without one.
func Meaning(family string) string { return httpMeaning[family] }

// CheckPlan refuses a plan holding a fault with no HTTP meaning.
func CheckPlan(plan *faults.Plan) error {
	for _, f := range plan.Faults() {
		if err := Supports(f.Family.Name); err != nil {
			return fmt.Errorf("--fault %s: %w", f.Spec, err)
		}
	}
	return nil
}

// outcome is what the faults fired before forwarding decided about the
// triggering message.
type outcome struct {
	faults.Fate
	// cutBy is the fault that cuts the client's connection (eof, reset);
	// reset says it is reset (RST), not closed; keepServer says the
	// server's side stays open and is read into the record (server=read).
	cutBy      string
	reset      bool
	keepServer bool
	// status is the error status fault statusBy answers with in the
	// server's place (http-error).
	status   int
	statusBy string
	// reuseIDBy is the fault that sends the event with the id of the one
	// before it (event-id-reuse).
	reuseIDBy string
	// forge is the forgery of Host and Origin fault forgeBy sends the
	// client's request on with (forge-origin).
	forge, forgeBy string
}

// apply carries out fired faults in plan order, recording each decision.
// forwarded says the message went on already.
func (x *exchange) apply(firings []faults.Firing, dir wire.Direction, cause int64, forwarded bool) outcome {
	p := x.p
	var o outcome
	for _, f := range firings {
		e := f.Effect
		detail := e.Detail
		skipped := ""
		if e.CloseServerInput {
			// On HTTP, the end of the client's input is its connection's.
			detail = "cut the client's connection before this message"
			if forwarded {
				detail = "cut the client's connection after this message"
			}
		}
		if e.Copies > 0 && dir == wire.ToServer {
			skipped = "skipped: on HTTP a client's POST is not sent twice"
		}
		if e.HalfClose != 0 || e.Hold != nil || e.Throttle != nil || e.StderrFlood != nil || e.Linger != nil {
			skipped = "skipped: no HTTP meaning"
		}
		if sg := e.Signal; sg != nil {
			if p.cfg.Signaller == nil {
				skipped = "skipped: mcpchaos did not start this server, so it has no process to signal (give the server's command after --)"
			} else if why := p.cfg.Signaller.CanSignal(sg.Name); why != "" {
				skipped = "skipped: " + why
			}
		}
		if r := e.Respond; r != nil && r.Status != 0 && (forwarded || x.headSent()) {
			skipped = "skipped: the response's status was already sent to the client"
		}
		if e.HoldHead != nil && (forwarded || x.headSent()) {
			skipped = "skipped: the response head was already sent to the client"
		}
		if e.Rewrite != nil && dir == wire.ToClient && f.Fault.Family.Name == "mutate" {
			skipped = "skipped: on HTTP, mutate changes the client's messages (the body of its POST) only"
		}
		if e.ReuseEventID && dir == wire.ToServer {
			skipped = "skipped: no event id travels toward the server"
		}
		if len(e.Foreign) > 0 {
			if why := p.foreignSkip(); why != "" {
				skipped = why
			}
		}
		if e.Credentials != nil {
			if why := p.credentialsSkip(); why != "" {
				skipped = why
			}
		}
		if e.ForgeOrigin != "" && (dir != wire.ToServer || forwarded) {
			skipped = "skipped: only a client's POST not yet sent on carries a Host and an Origin to forge"
		}
		if e.EndSession && p.sessionID() == "" {
			skipped = "skipped: the session has no Mcp-Session-Id (a stateless server, or before initialize answered): there is no session to end"
		}
		var forged string
		if fs := e.ForgetSession; fs != nil {
			// The exchange's own id, not the latest POST's: under
			// concurrent requests, the session is the triggering one's.
			switch by := p.forgottenBy(x.session); {
			case x.session == "":
				skipped = "skipped: the request carries no Mcp-Session-Id (a stateless server, the legacy transport, or before initialize answered): there is no session to forget"
			case by != "":
				skipped = "skipped: fault " + by + " already made the server forget session " + x.session
			default:
				forged = faults.ForgeSessionID(x.session, fs.Seed)
				detail = fmt.Sprintf("forget session %s at the server: from now on its requests go on with Mcp-Session-Id %s, which the server never issued", x.session, forged)
			}
		}
		// onGet aims the fault at the client's GET stream; gs is that
		// stream when it is not this exchange's own, on which the fault
		// acts as on any exchange.
		onGet := e.Stream == faults.StreamGET
		var gs *stream
		if onGet && e.CloseServerInput {
			detail = "cut the client's GET stream"
		}
		if onGet && skipped == "" {
			switch gs = p.getStream(); {
			case gs == nil:
				skipped = "skipped: " + noGetStream
			case gs.x == x:
				gs = nil
			case e.CloseServerInput:
				detail += fmt.Sprintf(" (exchange %d)", gs.x.n)
			default:
				detail += fmt.Sprintf(" (GET stream: exchange %d)", gs.x.n)
			}
		}
		if skipped != "" {
			detail = skipped + " (" + detail + ")"
		}
		ev := wire.Event{Type: wire.EventFault, Fault: f.Label, Action: f.Fault.Family.Name, Detail: detail,
			Of: cause, Spec: f.Fault.Spec, Exchange: x.n}
		if forged != "" {
			ev.MCPSession = x.session
		}
		if st := e.Stall; st != nil && p.rec != nil {
			ev.Dir, ev.Forever = st.Dir.String(), st.For == 0
			if st.For > 0 {
				ev.UntilUS = p.rec.Now() + st.For.Microseconds()
			}
		}
		if e.Rewrite != nil && !forwarded {
			m := wire.Classify(e.Rewrite)
			ev.Dir, ev.ID = dir.String(), m.ID
		}
		p.record(ev)
		if skipped != "" {
			continue
		}
		switch {
		case e.Stall != nil && onGet:
			p.getGate.set(e.Stall.For)
		case e.Stall != nil:
			p.gates[e.Stall.Dir].set(e.Stall.For)
		}
		if gs != nil {
			// Nothing of this exchange's changes: the fault's cut and
			// injections go to the GET stream.
			x.onGetStream(gs, f.Label, e, cause)
			continue
		}
		if e.Delay > 0 {
			x.flush() // the delay holds this message, not those before it
		}
		if e.Delay > 0 && !ctxsleep.Sleep(x.ctx, e.Delay) && !forwarded && o.Dropped == "" {
			o.Dropped = "the session ended while fault " + f.Label + " delayed this message"
		}
		if e.CloseServerInput && o.cutBy == "" {
			o.cutBy, o.keepServer = f.Label, e.KeepServerSide
		}
		if r := e.Respond; r != nil && r.Reset && o.cutBy == "" {
			o.cutBy, o.reset, o.keepServer = f.Label, true, e.KeepServerSide
		}
		if r := e.Respond; r != nil && r.Status != 0 && o.statusBy == "" {
			o.status, o.statusBy = r.Status, f.Label
		}
		if e.EndSession {
			p.endSession(x, f.Label, cause)
		}
		if len(e.Foreign) > 0 {
			// Beside the client's session, which goes on meanwhile.
			go p.foreign(f.Label, cause, e.Foreign)
		}
		if e.Credentials != nil {
			go p.credentials(f.Label, cause, e.Credentials)
		}
		if e.Signal != nil {
			p.cfg.Signaller.Signal(e.Signal.Name, f.Label)
		}
		if forged != "" {
			p.forget(x.session, forged, f.Label)
		}
		if e.HoldHead != nil {
			x.holdHeadFor(f.Label, e.HoldHead.For)
		}
		if e.ReuseEventID && o.reuseIDBy == "" {
			o.reuseIDBy = f.Label
		}
		if e.ForgeOrigin != "" && o.forgeBy == "" {
			o.forge, o.forgeBy = e.ForgeOrigin, f.Label
		}
		if !forwarded {
			// Copies of a client's POST were skipped above, and a fragment
			// only shapes the writes of an event stream.
			o.Add(f.Label, e)
		} else {
			for _, inj := range e.InjectAfter {
				x.inject(labelled{f.Label, inj, cause})
			}
		}
		for _, inj := range e.Inject {
			x.inject(labelled{f.Label, inj, cause})
		}
	}
	return o
}

// noGetStream is why a fault aimed at the client's GET stream found none.
const noGetStream = "no GET stream is open toward the client (it opened none, or the one it had ended and was not reopened)"

// onGetStream carries out, on the client's GET stream gs, what a fault
// fired on this exchange asked of it: a cut or reset, injections toward
// the client. (Its stall is the GET stream's gate, set by apply.)
func (x *exchange) onGetStream(gs *stream, label string, e faults.Effect, cause int64) {
	cut := e.CloseServerInput
	reset := e.Respond != nil && e.Respond.Reset
	if (cut || reset) && !gs.cutFrom(label, reset, e.KeepServerSide) {
		x.p.record(wire.Event{Type: wire.EventFault, Fault: label, Of: cause, Exchange: gs.x.n,
			Detail: "the GET stream had ended before fault " + label + " could cut it"})
	}
	for _, inj := range append(append([]faults.Injection(nil), e.Inject...), e.InjectAfter...) {
		if inj.Dir != wire.ToClient {
			x.inject(labelled{label, inj, cause})
			continue
		}
		gs.x.injectInto(gs, label, inj, cause)
	}
}

// getStream is the client's open standalone GET stream (the newest, if it
// has several), or nil.
func (p *Proxy) getStream() *stream {
	p.mu.Lock()
	defer p.mu.Unlock()
	var best *stream
	for _, st := range p.streams {
		if st.x.standalone && (best == nil || st.x.n > best.x.n) {
			best = st
		}
	}
	return best
}

// inject carries out one injection: toward the server as a POST, toward
// the client into this exchange's stream (or, before it opens, once it
// does; with none, into another open stream).
func (x *exchange) inject(l labelled) {
	if l.inj.Dir == wire.ToServer {
		x.p.post(x, l)
		return
	}
	x.mu.Lock()
	st, answered := x.stream, x.answered
	if st == nil && !answered && x.r.Method == http.MethodPost {
		x.pending = append(x.pending, l)
		x.mu.Unlock()
		return
	}
	x.mu.Unlock()
	if st != nil {
		x.injectInto(st, l.label, l.inj, l.cause)
		return
	}
	x.p.injectElsewhere(x, l, "the exchange that triggered it has no event stream")
}

// post sends a message a fault made toward the server, with the headers of
// the client's latest POST, and records what the server answered; the
// client never sees it.
func (p *Proxy) post(from *exchange, l labelled) {
	if l.inj.Gap > 0 && !ctxsleep.Sleep(from.ctx, l.inj.Gap) {
		return
	}
	m := wire.Classify(l.inj.Raw)
	p.injecting(&m, l.label)
	h, _ := p.asTheClient()
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	mcpheader.Mirror(h, l.inj.Raw, h.Get("MCP-Protocol-Version"))
	// The injected exchange lives past the one that fired it, within the
	// session: an early-request fired on initialize is answered after.
	ctx, cancel := context.WithTimeout(p.ctx, injectTimeout)
	defer cancel()
	x := &exchange{p: p, n: p.exchanges.Add(1), r: from.r.WithContext(ctx), ctx: ctx, line: "POST " + from.r.URL.RequestURI() + " (injected by fault " + l.label + ")"}
	p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, HTTP: x.line, MCPSession: h.Get("Mcp-Session-Id")})
	x.recordMessage(wire.EventInjected, wire.ToServer, &m, "", l.label, l.cause)
	req, err := x.upstreamRequest(http.MethodPost, l.inj.Raw, h)
	if err != nil {
		p.record(wire.Event{Type: wire.EventError, Exchange: x.n, Detail: err.Error()})
		return
	}
	resp, err := p.upstream.Do(req)
	if err != nil {
		p.record(wire.Event{Type: wire.EventError, Exchange: x.n, Detail: "the upstream could not be reached: " + err.Error()})
		return
	}
	p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: resp.StatusCode, Detail: "response: " + orNone(resp.Header.Get("Content-Type"))})
	x.swallow(resp, "sent on the exchange of a message injected by fault "+l.label+": the client never opened it")
}

// swallow records the messages of a response the client will never read,
// each dropped for why.
func (x *exchange) swallow(resp *http.Response, why string) {
	defer resp.Body.Close()
	media := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case media == "text/event-stream":
		x.swallowEvents(sse.NewReader(resp.Body, x.p.cfg.MaxBody), why)
	case media == "application/json" && !x.p.legacyPost(x.r):
		if body, _ := readLimited(resp.Body, x.p.cfg.MaxBody); len(bytes.TrimSpace(body)) > 0 {
			x.dropUnread(body, "", why)
		}
	default:
		// An error page carries no message, but may carry the server's
		// traceback: it goes into the record as the client's would. So
		// does the body of a POST on the legacy transport (relayOpaque).
		x.recordErrorBody(resp, why)
	}
}

// recordErrorBody records a response body the client will never read as the
// body of its HTTP response, not as a message.
func (x *exchange) recordErrorBody(resp *http.Response, why string) {
	defer resp.Body.Close()
	if body, _ := readLimited(resp.Body, x.p.cfg.MaxBody); len(body) > 0 {
		e := wire.Event{Type: wire.EventHTTP, Exchange: x.n, Status: resp.StatusCode, Detail: "response body (" + why + ")"}
		e.SetRaw(body)
		x.p.record(e)
	}
}

// swallowEvents records the rest of an event stream the client will never
// read.
func (x *exchange) swallowEvents(er *sse.Reader, why string) {
	for {
		ev, err := er.Next()
		if err != nil {
			return
		}
		if ev.IsMessage() {
			x.dropUnread(ev.Data, ev.ID, why)
		}
	}
}

func (x *exchange) dropUnread(data []byte, eventID, why string) {
	m := wire.Classify(data)
	seq := x.recordMessage(wire.EventReceived, wire.ToClient, &m, eventID, "", 0)
	if m.IsAnswer() && strings.HasPrefix(m.ID, wire.InjectIDPrefix) {
		why = "the answer to a request injected " + x.p.injector(m.ID)
	}
	x.recordRef(wire.EventDropped, wire.ToClient, seq, why)
}
