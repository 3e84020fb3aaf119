package judge

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The cut checks. A fault that cuts an exchange at both ends (wire.CutBoth,
// the default of eof and reset over HTTP) closes the server's side too, as
// a network cut does: what the server still had to send on that exchange
// never arrives, and that is the fault's doing. A request whose answer
// travelled there is noted, not judged; a resumable server may still
// bring it back on the client's GET with Last-Event-ID, and a replay is
// an answer like any other.
//
// Which requests' answers travel on an exchange: a POST's own request (the
// answer comes on its response stream); on a GET that resumes a POST's
// stream, that POST's; on the legacy transport's one stream, every
// request of its session. A cut of the client's standalone GET stream on
// streamable HTTP ends no answer, but what the server sends the client
// outside a call until the client reopens it (a handler's roots/list, as
// server-everything's get-roots-list sends) cannot arrive, and a call
// whose handler waits for its answer waits for ever: the requests open
// while no GET stream was, are noted too. The legacy transport has one more rule: once
// the session's stream is gone, the server cannot answer anything, so a
// request it accepts (2xx) after that and never answers is lost
// (reports.RuleAcceptedNoStream); it should refuse it with an error status.

// raceWindow is how long after a cut a request may still meet a server
// that has not noticed its stream close: what it accepts then is not held
// against it.
const raceWindow = 100_000 // µs

// maxCutExchanges bounds the exchanges the cut checks remember.
const maxCutExchanges = 4096

type cutTracker struct {
	// eventExchange maps an SSE event id to the exchange that carried it;
	// resumes maps a GET that resumed from an id to the exchange it
	// resumes (through any resumptions between).
	eventExchange map[string]int64
	resumes       map[int64]int64
	// legacy maps the exchange of a legacy transport's stream to the
	// request URI its endpoint event named (its session's POSTs go there).
	legacy map[int64]string
	// legacyCut maps a legacy session's endpoint URI to the cut that ended
	// its stream; posts are the POSTs to a cut session's endpoint, by
	// exchange.
	legacyCut map[string]*cutEvent
	posts     map[int64]postAfterCut
	// postTarget maps a POST's exchange to its request URI, for a message
	// the proxy read off a POST begun before a cut of its session's stream.
	postTarget map[int64]string
	// standalone are the exchanges of the client's standalone GET
	// streams.
	standalone map[int64]bool
}

// postAfterCut is a POST to the endpoint of a legacy session whose stream
// a fault had cut; raced says it was sent within raceWindow of the cut.
type postAfterCut struct {
	cut   *cutEvent
	raced bool
}

// cutEvent is a fault's cut of an exchange at both ends.
type cutEvent struct {
	fault string
	ev    reports.Evidence
	// legacy says the exchange was the legacy transport's session stream;
	// get, the client's standalone GET stream on streamable HTTP.
	legacy, get bool
}

// http notes an http event, and returns the cut it records, if it is a
// fault's cut at both ends, with the exchange whose answers it ends.
func (c *cutTracker) http(e *wire.Event) (cut *cutEvent, exchange int64) {
	if e.Exchange == 0 {
		return nil, 0
	}
	switch {
	case e.HTTP != "":
		c.request(e)
	case strings.HasPrefix(e.Detail, "the legacy transport's endpoint event"):
		if uri := endpointURI(e); uri != "" {
			c.legacy = bounded(c.legacy)
			c.legacy[e.Exchange] = uri
		}
	case e.Cut == wire.CutBoth:
		cut = &cutEvent{fault: e.Fault, ev: evidenceOf(e)}
		exchange = e.Exchange
		if r, ok := c.resumes[exchange]; ok {
			exchange = r
		}
		cut.get = c.standalone[e.Exchange]
		if uri, ok := c.legacy[e.Exchange]; ok {
			cut.legacy, cut.get = true, false
			if c.legacyCut == nil {
				c.legacyCut = map[string]*cutEvent{}
			}
			if len(c.legacyCut) < maxCutExchanges {
				c.legacyCut[uri] = cut
			}
		}
	}
	return cut, exchange
}

// request notes an HTTP request reaching the proxy: a GET that resumes a
// POST's stream, or a POST to the endpoint of a legacy session whose
// stream a fault cut.
func (c *cutTracker) request(e *wire.Event) {
	if e.Standalone {
		c.standalone = bounded(c.standalone)
		c.standalone[e.Exchange] = true
	}
	method, target, _ := strings.Cut(e.HTTP, " ")
	switch method {
	case "GET":
		id := lastEventID(e.Detail)
		if id == "" || e.Standalone {
			return
		}
		if x, ok := c.eventExchange[id]; ok {
			if r, ok := c.resumes[x]; ok {
				x = r
			}
			c.resumes = bounded(c.resumes)
			c.resumes[e.Exchange] = x
		}
	case "POST":
		target, _, _ = strings.Cut(target, " ")
		c.postTarget = bounded(c.postTarget)
		c.postTarget[e.Exchange] = target
		if cut := c.legacyCut[target]; cut != nil {
			c.posts = bounded(c.posts)
			c.posts[e.Exchange] = postAfterCut{cut: cut, raced: e.T-cut.ev.TUS < raceWindow}
		}
	}
}

// received notes the exchange that carried an event id.
func (c *cutTracker) received(e *wire.Event) {
	if e.EventID == "" || e.Exchange == 0 {
		return
	}
	c.eventExchange = bounded(c.eventExchange)
	c.eventExchange[e.EventID] = e.Exchange
}

// inFlightAt returns the cut of the legacy session a POST on exchange went
// to, when the POST began before that cut and its message was read after
// it, or began within raceWindow after it: in flight at the cut, as the
// session's open requests were, or racing the server's noticing it. A
// server that answers such a POST with an error status has answered it
// all the same; one that dies of the cut (server-everything 0.6.2 exits
// when its session's stream closes) never answers it, as it could answer
// none of the others.
func (c *cutTracker) inFlightAt(exchange int64) *cutEvent {
	if p, after := c.posts[exchange]; after {
		if p.raced {
			return p.cut
		}
		return nil // judged by what the server answered the POST
	}
	target, ok := c.postTarget[exchange]
	if !ok {
		return nil
	}
	return c.legacyCut[target]
}

// accepted returns the cut of the legacy session a POST on exchange went
// to, when it went after the cut.
func (c *cutTracker) accepted(exchange int64) (postAfterCut, bool) {
	p, ok := c.posts[exchange]
	return p, ok
}

// bounded makes m, or empties it once it holds maxCutExchanges: the
// entries that matter are the latest, and a session that outgrows it
// loses only the excuse of an old cut.
func bounded[K comparable, V any](m map[K]V) map[K]V {
	if m == nil || len(m) >= maxCutExchanges {
		return map[K]V{}
	}
	return m
}

// lastEventID is the Last-Event-ID the proxy lists in a request's detail.
func lastEventID(detail string) string {
	const key = "Last-Event-ID: "
	i := strings.Index(detail, key)
	if i < 0 {
		return ""
	}
	id, _, _ := strings.Cut(detail[i+len(key):], "; ")
	return id
}

// endpointURI is the request URI (path and query) a legacy endpoint event
// names, as the client's POSTs to it reach the proxy.
func endpointURI(e *wire.Event) string {
	b, err := e.Bytes()
	if err != nil {
		return ""
	}
	var data []string
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:"); ok {
			data = append(data, strings.TrimPrefix(v, " "))
		}
	}
	u, err := url.Parse(strings.TrimSpace(strings.Join(data, "\n")))
	if err != nil || u.Path == "" {
		return ""
	}
	return u.RequestURI()
}

// cutExchange marks the requests whose answers travel on exchange, which
// cut ended at both ends; a legacy stream's cut marks every request, and a
// GET stream's every request open until the client opens another.
func (t *tracker) cutExchange(cut *cutEvent, exchange int64) {
	all := cut.legacy || cut.get
	if cut.get {
		t.getGap = cut
	}
	for _, f := range t.pending {
		if f.kind == frameRequest && (all || f.exchange == exchange) && f.cut == nil {
			f.cut = cut
		}
	}
	if !all {
		if r := t.byExchange[exchange]; r != nil && r.cut == nil {
			r.cut = cut
		}
		return
	}
	for _, r := range t.bySeq {
		if r.cut == nil {
			r.cut = cut
		}
	}
}

// inFlightAtCut marks the request received as seq, whose message was
// read after cut ended its legacy session's stream though its POST began
// before: in flight at the cut, it could not be answered either.
func (t *tracker) inFlightAtCut(seq int64, cut *cutEvent) {
	if f := t.pending[seq]; f != nil && f.kind == frameRequest && f.cut == nil {
		f.cut = cut
	}
}

// acceptedAfterCut marks the request POSTed on exchange, which the server
// accepted although the legacy session's stream had closed; one that may
// have raced the server's noticing is only excused, as those in flight at
// the cut are.
func (t *tracker) acceptedAfterCut(exchange int64, status int, p postAfterCut, ev reports.Evidence) {
	r := t.byExchange[exchange]
	if r == nil || r.acceptedBy != nil {
		return
	}
	if p.raced {
		r.cut = p.cut
		return
	}
	ev.Excerpt = fmt.Sprintf("HTTP %d: the server accepted the request", status)
	r.acceptedBy = &acceptedAfterCut{cut: p.cut, status: status, ev: ev}
}

// acceptedAfterCut is a server accepting a request on a legacy session
// whose stream a fault had cut: its status, and the event of it.
type acceptedAfterCut struct {
	cut    *cutEvent
	status int
	ev     reports.Evidence
}

// cutNote is the note on a request left unanswered because a cut ended the
// exchange its answer travelled on.
func cutNote(name string, cut *cutEvent) string {
	if cut.get {
		return fmt.Sprintf("unanswered, but fault %s cut the client's GET stream at both ends while it was open, and the client had no GET stream for a while: a request the %s sent it there for this call (roots, sampling, elicitation) could not arrive, and its handler may be waiting for the answer", cut.fault, name)
	}
	if cut.legacy {
		return fmt.Sprintf("unanswered, but fault %s cut the legacy transport's session stream, which carries every answer, at both ends (the %s's side too, as a network cut does): the %s could not send the answer", cut.fault, name, name)
	}
	return fmt.Sprintf("unanswered, but fault %s cut the exchange its answer travels on at both ends (the %s's side too, as a network cut does), so the %s could not send it there; "+
		"a %s may make its streams resumable (event ids) and replay it on the client's GET with Last-Event-ID, but need not (MCP 2025-11-25, Basic › Transports › Streamable HTTP › Resumability and Redelivery)", cut.fault, name, name, name)
}

// acceptedWords says how a request accepted after its session's stream was
// cut was lost, for its finding.
func acceptedWords(name string, a *acceptedAfterCut) string {
	return fmt.Sprintf("%s accepted it (HTTP %d, %s after fault %s cut the session's stream at both ends) and never answered it: on the legacy transport every answer travels on that stream, so a %s whose session has no stream must refuse the session's messages with an error status (404), so that the client reconnects",
		name, a.status, words.Duration(a.ev.TUS-a.cut.ev.TUS), a.cut.fault, name)
}
