package judge

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The request checks: every request delivered to the peer is an obligation,
// opened by its forwarded event (the peer got it; a request we dropped never
// reached it) and closed by the peer's answer (a received response or error
// with its id). What is still open at the end is a hang, a lost response, or
// indeterminate when a fault of ours explains it. Answers that close nothing
// are duplicates or unknown.

// inFrame is a frame received from the other side and not yet delivered to
// the peer: only the frames that change the peer's obligations are kept.
type inFrame struct {
	kind    frameKind
	id      string
	method  string
	cancels string // the requestId a cancellation names
	token   string // the progress token a request carries
	tool    string // the tool a tools/call calls
	// malformed says what breaks the request's envelope (malformedRequest).
	malformed string
	// exchange is the HTTP exchange the request came in (mcpchaos
	// proxy): the server's messages on its response stream relate to it.
	exchange int64
	recv     reports.Evidence
	// cut is the fault's cut that ended, at both ends, the exchange its
	// answer would travel on.
	cut *cutEvent
	// collided says an id-collision fault sent the request on under the
	// id of another in flight.
	collided bool
}

type frameKind uint8

const (
	frameRequest frameKind = iota + 1
	frameCancel
	frameInvalid
)

// openReq is a request the peer has and has not answered.
type openReq struct {
	id, method, tool string
	// malformed says what breaks the request's envelope (malformedRequest).
	malformed string
	// by is the fault that injected the request, "" for the other peer's.
	by        string
	recv, fwd reports.Evidence
	// probe is the last liveness probe sent because of this request.
	probe *probeInfo
	// token is the request's progress token; progress counts the peer's
	// progress notifications for it and lastProgress is the latest. Each
	// restarts the deadline (MCP, Lifecycle: Timeouts), up to the cap.
	token        string
	progress     int
	lastProgress *reports.Evidence
	// exchange is the HTTP exchange the request came in, 0 off HTTP;
	// notes counts the notifications the peer sent on that exchange's
	// stream, which relate to the request (Streamable HTTP), and lastNote
	// is the latest: a handler that sends them is running.
	exchange int64
	notes    int
	lastNote *reports.Evidence
	// cut is the fault's cut that ended, at both ends, the exchange the
	// answer would travel on; acceptedBy is the server accepting the
	// request on a legacy session whose stream was gone (see cuts.go).
	cut        *cutEvent
	acceptedBy *acceptedAfterCut
	// collided is the request an id-collision fault sent on under the id
	// of another in flight; sharedAnswered is the answer the other request
	// under its id got while it stayed open (RuleUnansweredReusedID).
	collided       bool
	sharedAnswered *reports.Evidence
}

// errorStatus notes an HTTP exchange answered with an error status, whose
// body may hold an error: with id null, or with the id of request, the
// request the status answered ("" when it named none).
// noIDProblem is the classifier's word for an answer without an id.
const noIDProblem = `response has no "id"`

// errorBody says whether exchange was answered with an error status whose
// body is still to come.
func (t *tracker) errorBody(exchange int64) bool {
	_, ok := t.errorExchanges[exchange]
	return exchange != 0 && ok
}

func (t *tracker) errorStatus(exchange int64, status int, request string) {
	if t.errorExchanges == nil {
		t.errorExchanges = map[int64]statusAnswer{}
	}
	// The body follows its head at once: only the latest exchanges
	// matter, so the oldest goes when the window is full.
	if len(t.errorOrder) >= maxSuspects {
		delete(t.errorExchanges, t.errorOrder[0])
		t.errorOrder = t.errorOrder[1:]
	}
	t.errorExchanges[exchange] = statusAnswer{status: status, request: request}
	t.errorOrder = append(t.errorOrder, exchange)
}

// statusAnswer is an HTTP error status and the id of the request it
// answered.
type statusAnswer struct {
	status  int
	request string
}

// rejected settles the request received at seq, which an HTTP error status
// answered: a server that refuses a POST (400 for a method it does not
// know in this era, 404 for an expired session) has answered it, in the
// transport's terms, though no JSON-RPC response names its id. It returns
// the request's id.
func (t *tracker) rejected(seq int64) string {
	if f := t.pending[seq]; f != nil {
		t.unpend(seq, f)
		return f.id
	}
	for _, list := range t.open {
		for _, r := range list {
			if r.recv.Seq == seq {
				t.closeOpen(r)
				return r.id
			}
		}
	}
	return ""
}

// probeInfo is a liveness probe mcpchaos sent to the peer.
type probeInfo struct {
	method string
	ev     reports.Evidence
	answer *reports.Evidence
	// informative is false for a probe that could not tell anything: not
	// delivered, or sent after the peer's input was closed.
	informative bool
}

// answered remembers the last answeredCap answers by id, so that a second
// answer is recognised as a duplicate: an answer repeated more than
// answeredCap answers later counts as unknown. Only the latest answer to
// each id is kept, stamped with its place in the order of answers, and
// the stale are swept out every answeredCap answers: memory follows the ids
// answered recently, not the answers. Over HTTP, where every session
// numbers its requests from 1, that is a few ids however many sessions a
// proxy relays (issue 31: a ring of every answer held 64 Ki of them, 5 MB,
// most of them unreachable behind a later answer to the same id).
const answeredCap = 1 << 16

type answeredEntry struct {
	id, method string
	seq, t     int64
	// eventID is the SSE event id that carried the answer (HTTP): the same
	// event again is a replay on resumption, not a second answer.
	eventID string
	// undelivered says the relay did not deliver it (a cut stream's rest).
	undelivered bool
	// cancelled is set for a request the client cancelled before any
	// answer: one late answer is then allowed (the race the spec expects).
	cancelled bool
	// stamp is how many answers were put before it.
	stamp int64
}

type recentAnswers struct {
	byID map[string]*answeredEntry
	puts int64
}

func (a *recentAnswers) put(e answeredEntry) {
	if a.byID == nil {
		a.byID = map[string]*answeredEntry{}
	}
	e.stamp = a.puts
	a.puts++
	if old := a.byID[e.id]; old != nil {
		*old = e
	} else {
		a.byID[e.id] = &e
	}
	if a.puts%answeredCap == 0 {
		for id, x := range a.byID {
			if a.stale(x) {
				delete(a.byID, id)
			}
		}
	}
}

func (a *recentAnswers) stale(x *answeredEntry) bool { return a.puts-x.stamp > answeredCap }

func (a *recentAnswers) get(id string) *answeredEntry {
	if x := a.byID[id]; x != nil && !a.stale(x) {
		return x
	}
	return nil
}

// aggregate is a run of answers with the same problem, reported once with a
// count: a server that echoes a wrong id does it for every request.
type aggregate struct {
	method   string
	count    int
	replayed int // duplicates that were replays of delivered events
	ids      []string
	req      *reports.Request
	evidence []reports.Evidence
	null     bool
}

func (g *aggregate) add(id string, ev ...reports.Evidence) {
	g.count++
	if len(g.ids) < 5 {
		g.ids = append(g.ids, id)
	}
	g.evidence = addEvidence(g.evidence, ev...)
}

// maxTolerated bounds the ids whose answers are neither owed nor unknown.
const maxTolerated = 4096

type tracker struct {
	pending map[int64]*inFrame
	// pendingIDs finds a pending request by id. The relay records a frame
	// as forwarded after writing it, and a write of a large frame goes
	// straight to the pipe: a fast peer's answer can be recorded before the
	// forwarded event it answers.
	pendingIDs map[string]int64
	open       map[string][]*openReq
	bySeq      map[int64]*openReq // open requests by the seq of their received event
	// byToken finds the open request a progress notification is about.
	byToken map[string]*openReq
	// byExchange finds the open request whose HTTP exchange a
	// notification came on.
	byExchange map[int64]*openReq
	answers    recentAnswers
	// tolerated counts ids the peer may answer without being asked by the
	// other side: requests mcpchaos injected, invalid frames with an id.
	tolerated map[string]int
	// invalidDelivered counts invalid frames delivered to the peer that no
	// error with id null has answered yet: JSON-RPC answers a parse error
	// with id null.
	invalidDelivered int
	// errorExchanges are HTTP exchanges the server answered with an error
	// status whose body has not yet shown its error.
	errorExchanges map[int64]statusAnswer
	errorOrder     []int64 // errorExchanges' keys, oldest first
	// inTransit maps the seq of an answer carried by an SSE event to its
	// id until the relay says whether it delivered it, so that an answer
	// it did not deliver (a cut stream's rest) can be marked: only those
	// may come again on a resumed stream.
	inTransit map[int64]string
	// unresumable maps the seq of an answer that came over HTTP with no
	// event id to "method (id X)" until the relay says whether it
	// delivered it: if a fault cut it off, nothing could resume it.
	unresumable map[int64]string
	// lastFwd is the frame forwarded last and the seq it was received as: a
	// duplicate fault forwards copies right after the original, and the
	// peer may answer each copy.
	lastFwd    *inFrame
	lastFwdSeq int64
	// glued says a fault wrote a truncated frame (no line ending) toward
	// the peer: the next frame forwarded is read glued to it, one broken
	// line, so a request in it is not owed an answer.
	glued bool

	probes    map[string]*probeInfo
	lastProbe *probeInfo
	// earlyProbes are probe answers recorded before their probe event (the
	// relay records a probe after writing it).
	earlyProbes map[string]*reports.Evidence
	// earlyInjected are answers to ids of injected requests (wire.
	// InjectIDPrefix) recorded before the injected event, which the relay
	// also records after writing: they are checked once the method is known.
	earlyInjected []wire.Event

	// suspects are answers to ids nobody asked for yet. They become unknown
	// answers only once suspectWindow has passed without an injected request
	// of that id, which the relay also records after writing it.
	suspects []suspect

	// unclassifiedOut is the seq of the last line the peer wrote that was
	// too long to classify (0 when none).
	unclassifiedOut int64

	dups    map[string]*aggregate
	dupKeys []string
	unknown *aggregate
	// badBodyIDs are errors in the bodies of HTTP error statuses whose
	// ids name no request, and bodyStatuses those statuses.
	badBodyIDs   *aggregate
	bodyStatuses []int

	// asked are the peer's own requests to the other side.
	asked peerRequests
	// getGap is the cut of the client's GET stream while the client has
	// not opened another: requests delivered meanwhile are marked with it.
	getGap *cutEvent
}

// suspectWindow is how long an answer to an unknown id waits for the
// injected request it may answer to be recorded.
const suspectWindow = 1_000_000 // µs

// maxSuspects bounds the answers waiting; beyond it they are judged at once.
const maxSuspects = 1024

type suspect struct {
	id string
	ev reports.Evidence
}

func (t *tracker) init() {
	t.pending = map[int64]*inFrame{}
	t.pendingIDs = map[string]int64{}
	t.earlyProbes = map[string]*reports.Evidence{}
	t.open = map[string][]*openReq{}
	t.bySeq = map[int64]*openReq{}
	t.byToken = map[string]*openReq{}
	t.byExchange = map[int64]*openReq{}
	t.tolerated = map[string]int{}
	t.probes = map[string]*probeInfo{}
	t.dups = map[string]*aggregate{}
}

// receivedIn notes a frame on its way to the peer. It becomes the peer's
// business only once forwarded.
func (t *tracker) receivedIn(e *wire.Event) {
	switch e.Kind {
	case "request":
		t.pending[e.Seq] = &inFrame{kind: frameRequest, id: e.ID, method: e.Method, token: e.ProgressToken, tool: toolOf(e), exchange: e.Exchange, recv: evidenceOf(e), malformed: malformedRequest(e)}
		t.pendingIDs[e.ID] = e.Seq
	case "notification":
		if e.Method == "notifications/cancelled" {
			if id := cancelledID(e); id != "" {
				t.pending[e.Seq] = &inFrame{kind: frameCancel, cancels: id}
			}
		}
	case "invalid":
		t.pending[e.Seq] = &inFrame{kind: frameInvalid, id: e.ID}
	}
}

// toolOf is the name a tools/call request calls, "" for other requests.
func toolOf(e *wire.Event) string {
	if e.Method != "tools/call" {
		return ""
	}
	b, err := e.Bytes()
	if err != nil {
		return ""
	}
	name := member(member(b, "params"), "name")
	if kindOf(name) != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(name, &s) != nil {
		return ""
	}
	return s
}

// cancelledID is the JSON text of params.requestId of a cancellation.
func cancelledID(e *wire.Event) string {
	b, err := e.Bytes()
	if err != nil {
		return ""
	}
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &n) != nil {
		return ""
	}
	return string(n.Params.RequestID)
}

func (t *tracker) forwarded(j *Judger, e *wire.Event) {
	if e.Dir != j.p.in {
		return
	}
	f := t.pending[e.Of]
	if f == nil {
		if e.Of != 0 && e.Of == t.lastFwdSeq && t.lastFwd != nil {
			t.copyDelivered(t.lastFwd)
		}
		return
	}
	t.unpend(e.Of, f)
	t.lastFwd, t.lastFwdSeq = f, e.Of
	if t.glued {
		t.glued = false
		if f.kind == frameRequest {
			t.tolerate(f.id)
		}
		return
	}
	switch f.kind {
	case frameRequest:
		if e.Kind == "request" && e.ID != "" {
			// A fault rewrote the request on its way (the forwarded event
			// then records the bytes written): the peer owes the answer
			// under the id it got, and what breaks the envelope is what
			// it got (mutate).
			f.id = e.ID
			f.malformed = malformedRequest(e)
		}
		// The forwarded event's excerpt is written only if a finding cites
		// it: most requests are answered and never need one.
		r := &openReq{id: f.id, method: f.method, tool: f.tool, recv: f.recv, fwd: reports.Evidence{Seq: e.Seq, TUS: e.T, Type: e.Type, Dir: e.Dir}, token: f.token, exchange: f.exchange, cut: cmp.Or(f.cut, t.getGap), collided: f.collided, malformed: f.malformed}
		t.open[f.id] = append(t.open[f.id], r)
		t.bySeq[e.Of] = r
		if r.token != "" {
			t.byToken[r.token] = r
		}
		if r.exchange != 0 {
			t.byExchange[r.exchange] = r
		}
	case frameCancel:
		id := f.cancels
		if e.Kind == "notification" {
			// Translated on its way to the id an id fault gave the
			// request: the peer got that one.
			if c := cancelledID(e); c != "" {
				id = c
			}
		}
		t.cancel(id, e)
	case frameInvalid:
		t.invalidDelivered++
		if f.id != "" {
			t.tolerate(f.id)
		}
	}
}

// copyDelivered notes a second delivery of a frame (a duplicate fault): the
// peer may answer the copy of a request, or not (it reuses an id in flight),
// and may answer the copy of an invalid frame with another parse error.
func (t *tracker) copyDelivered(f *inFrame) {
	switch f.kind {
	case frameRequest:
		t.tolerate(f.id)
	case frameInvalid:
		t.invalidDelivered++
		if f.id != "" {
			t.tolerate(f.id)
		}
	}
}

// rewritten notes that an id fault is about to send the request received
// as seq on under id (its fault event, recorded before the write, says so):
// an answer to the new id may be recorded before the forwarded event.
func (t *tracker) rewritten(seq int64, id string, collided bool) {
	f := t.pending[seq]
	if f == nil || f.kind != frameRequest || f.id == id {
		return
	}
	f.collided = collided
	if t.pendingIDs[f.id] == seq {
		delete(t.pendingIDs, f.id)
	}
	f.id = id
	t.pendingIDs[id] = seq
}

// dropped forgets a frame that never reached the peer. A request can be
// dropped after it was recorded as forwarded (a write that failed with the
// frame still buffered): then the peer never had it either.
// answerSettled is the relay's word on the answer received as seq:
// delivered, or not.
// It returns "method (id X)" for an answer with no event id that was not
// delivered: no resumption can bring it back.
func (t *tracker) answerSettled(seq int64, delivered bool) (lost string) {
	if what, ok := t.unresumable[seq]; ok {
		delete(t.unresumable, seq)
		if !delivered {
			return what
		}
		return ""
	}
	id, ok := t.inTransit[seq]
	if !ok {
		return ""
	}
	delete(t.inTransit, seq)
	if a := t.answers.get(id); !delivered && a != nil && a.seq == seq {
		a.undelivered = true
	}
	return ""
}

// inTransitAnswer notes an answer carried by an SSE event, until settled.
func (t *tracker) inTransitAnswer(e *wire.Event, id, method string) {
	if e.EventID == "" {
		if e.Exchange == 0 {
			return // stdio
		}
		if t.unresumable == nil {
			t.unresumable = map[int64]string{}
		}
		if len(t.unresumable) < maxTolerated {
			t.unresumable[e.Seq] = fmt.Sprintf("%s (id %s)", method, id)
		}
		return
	}
	if t.inTransit == nil {
		t.inTransit = map[int64]string{}
	}
	if len(t.inTransit) < maxTolerated {
		t.inTransit[e.Seq] = id
	}
}

func (t *tracker) dropped(e *wire.Event) {
	if f, ok := t.pending[e.Of]; ok {
		t.unpend(e.Of, f)
		return
	}
	if r := t.bySeq[e.Of]; r != nil {
		t.closeOpen(r)
	}
}

func (t *tracker) unpend(seq int64, f *inFrame) {
	delete(t.pending, seq)
	if f.kind == frameRequest && t.pendingIDs[f.id] == seq {
		delete(t.pendingIDs, f.id)
	}
}

// injected notes a frame mcpchaos wrote toward the peer. A request a fault
// injected with an id of ours is owed an answer like any other: the relay
// swallows the answer, so the other peer never sees it.
func (t *tracker) injected(j *Judger, e *wire.Event) {
	n := brokenLines(e)
	if truncated(e) {
		t.glued = true
	}
	switch {
	case n > 1:
		// A frame a fault split with a newline arrives as n broken lines,
		// whatever its classification as one frame says.
		t.invalidInjected(e, n)
	case e.Kind == "request" && strings.HasPrefix(e.ID, wire.InjectIDPrefix):
		for i := range t.earlyInjected {
			if a := &t.earlyInjected[i]; a.ID == e.ID {
				t.answers.put(answeredEntry{id: e.ID, method: e.Method, seq: a.Seq, t: a.T})
				j.pr.check(j, a, e.Method)
				t.earlyInjected = slices.Delete(t.earlyInjected, i, i+1)
				return
			}
		}
		ev := evidenceOf(e)
		r := &openReq{id: e.ID, method: e.Method, by: e.Fault, recv: ev, fwd: reports.Evidence{Seq: e.Seq, TUS: e.T, Type: e.Type, Dir: e.Dir}}
		t.open[e.ID] = append(t.open[e.ID], r)
		t.bySeq[e.Seq] = r
	case e.Kind == "request":
		for i, s := range t.suspects {
			if s.id == e.ID {
				t.suspects = slices.Delete(t.suspects, i, i+1)
				return // answered already, just recorded late
			}
		}
		t.tolerate(e.ID)
	case e.Kind == "notification" && e.Method == "notifications/cancelled":
		if id := cancelledID(e); id != "" {
			t.cancel(id, e)
		}
	case e.Kind == "invalid":
		t.invalidInjected(e, n)
	}
}

// invalidInjected notes a malformed frame of n lines a fault wrote
// (corrupt): a parse error with id null per line is the right answer to it,
// not an unknown one. The relay records an injection after writing it, so
// its parse errors may be suspects already.
func (t *tracker) invalidInjected(e *wire.Event, n int) {
	for i := 0; i < len(t.suspects) && n > 0; {
		if t.suspects[i].id == "null" {
			t.suspects = slices.Delete(t.suspects, i, i+1)
			n--
			continue
		}
		i++
	}
	t.invalidDelivered += n
	if e.ID == "" {
		return
	}
	for i, s := range t.suspects {
		if s.id == e.ID {
			t.suspects = slices.Delete(t.suspects, i, i+1)
			return // answered already, recorded before the injection
		}
	}
	t.tolerate(e.ID)
}

// truncated reports whether an injected frame lacks its line ending (the
// corrupt fault's truncate mode).
func truncated(e *wire.Event) bool {
	b, err := e.Bytes()
	return err == nil && len(b) > 0 && !bytes.HasSuffix(b, []byte("\n"))
}

// brokenLines counts the non-empty lines of an injected frame: the corrupt
// fault's newline mode writes one frame as two broken lines.
func brokenLines(e *wire.Event) int {
	b, err := e.Bytes()
	if err != nil {
		return 1
	}
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return max(n, 1)
}

func (t *tracker) tolerate(id string) {
	if len(t.tolerated) < maxTolerated || t.tolerated[id] > 0 {
		t.tolerated[id]++
	}
}

// cancel closes the oldest open request with id: the spec lets a peer leave
// a cancelled request unanswered.
func (t *tracker) cancel(id string, e *wire.Event) {
	list := t.open[id]
	if len(list) == 0 {
		return
	}
	r := list[0]
	t.closeOpen(r)
	t.answers.put(answeredEntry{id: id, method: r.method, seq: e.Seq, t: e.T, cancelled: true})
}

func (t *tracker) closeOpen(r *openReq) {
	list := t.open[r.id]
	if i := slices.Index(list, r); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(t.open, r.id)
	} else {
		t.open[r.id] = list
	}
	delete(t.bySeq, r.recv.Seq)
	if r.token != "" && t.byToken[r.token] == r {
		delete(t.byToken, r.token)
	}
	if r.exchange != 0 && t.byExchange[r.exchange] == r {
		delete(t.byExchange, r.exchange)
	}
}

// streamNote notes a notification the peer sent on an HTTP exchange's
// response stream: over Streamable HTTP, what a server sends on a
// request's stream before the answer relates to that request, so its
// handler is running (a logging message, a progress without the token).
func (t *tracker) streamNote(e *wire.Event) {
	r := t.byExchange[e.Exchange]
	if r == nil || e.Exchange == 0 {
		return
	}
	r.notes++
	ev := evidenceOf(e)
	r.lastNote = &ev
}

// progress notes a progress notification the peer sent: the request it is
// about is being worked on.
func (t *tracker) progress(e *wire.Event) {
	r := t.byToken[e.ProgressToken]
	if r == nil || e.ProgressToken == "" {
		return
	}
	r.progress++
	ev := evidenceOf(e)
	r.lastProgress = &ev
}

// earlyInjectedAnswer keeps an answer to an injected request that was
// recorded before the request, and reports whether it did: its checks wait
// for the request's method.
func (t *tracker) earlyInjectedAnswer(e *wire.Event) bool {
	if e.Kind != "response" && e.Kind != "error" || !strings.HasPrefix(e.ID, wire.InjectIDPrefix) {
		return false
	}
	if len(t.open[e.ID]) > 0 || t.answers.get(e.ID) != nil || len(t.earlyInjected) >= maxSuspects {
		return false
	}
	t.earlyInjected = append(t.earlyInjected, *e)
	return true
}

// probe notes a liveness probe sent to the peer and returns it.
func (t *tracker) probe(j *Judger, e *wire.Event) *probeInfo {
	p := &probeInfo{method: e.Method, ev: evidenceOf(e)}
	p.informative = !strings.Contains(e.Detail, "not delivered") && j.pc.stdinClose == nil
	if a := t.earlyProbes[e.ID]; a != nil {
		p.answer = a
		delete(t.earlyProbes, e.ID)
	} else {
		t.probes[e.ID] = p
	}
	if !p.informative {
		return p
	}
	t.lastProbe = p
	if r := t.bySeq[e.Of]; e.Of != 0 && r != nil {
		r.probe = p
	}
	return p
}

// answer handles a frame the peer wrote: it closes the request it answers
// and returns that request's method, for the schema checks ("" when it
// answers none, or is no answer).
// claimant is the request of list, all open under one id, that answer e
// answers: over HTTP the one of e's own exchange (several clients through
// one proxy each number from 1); else the oldest whose method's result e
// has the shape of, else the oldest. A client that reuses an id in flight gets its answers in order or
// loses one; but the server may answer the two in either order (JSON-RPC
// sets none), and holding the oldest to an answer shaped for the other
// (server-everything's tasks/cancel answered before the tools/call whose
// id it borrowed) made a schema violation of a result that had none.
func claimant(list []*openReq, e *wire.Event) *openReq {
	if len(list) > 1 && e.Exchange != 0 {
		// Over HTTP an answer on a POST's stream answers that POST's
		// request: with several clients through one proxy (each numbering
		// from 1), the request of the answer's own exchange is the one it
		// answers, whatever the others under its id.
		for _, r := range list {
			if r.exchange == e.Exchange {
				return r
			}
		}
	}
	if len(list) > 1 && e.Kind == "response" {
		raw := bytesOf(e.Raw)
		for _, r := range list {
			if r.method != "" && checkResult(r.method, raw) == "" {
				return r
			}
		}
	}
	return list[0]
}

func (t *tracker) answer(j *Judger, e *wire.Event) string {
	switch e.Kind {
	case "response", "error":
	case "invalid":
		// An answer shaped wrongly (a bad "jsonrpc") still answers: the
		// protocol check reports the shape, and the request is not also a
		// hang.
		if e.ID != "" && e.Method == "" && len(t.open[e.ID]) > 0 {
			t.closeOpen(t.open[e.ID][0])
		}
		return ""
	default:
		return ""
	}
	id := e.ID
	if strings.HasPrefix(id, wire.ProbeIDPrefix) {
		ev := evidenceOf(e)
		if p := t.probes[id]; p != nil {
			p.answer = &ev
			delete(t.probes, id)
		} else if len(t.earlyProbes) < maxTolerated {
			t.earlyProbes[id] = &ev
		}
		return ""
	}
	if list := t.open[id]; len(list) > 0 {
		r := claimant(list, e)
		// Only a collision of the fault's making: over HTTP the sessions
		// of one proxy each number their requests from 1, so two open
		// requests under one id are most often two sessions', and one
		// left unanswered there is a hang.
		if len(list) > 1 && slices.ContainsFunc(list, func(o *openReq) bool { return o.collided }) {
			ev := evidenceOf(e)
			for _, o := range list {
				if o != r {
					o.sharedAnswered = &ev
				}
			}
		}
		t.closeOpen(r)
		t.answers.put(answeredEntry{id: id, method: r.method, seq: e.Seq, t: e.T, eventID: e.EventID})
		t.inTransitAnswer(e, id, r.method)
		return r.method
	}
	if seq, ok := t.pendingIDs[id]; ok {
		f := t.pending[seq]
		t.unpend(seq, f)
		t.answers.put(answeredEntry{id: id, method: f.method, seq: e.Seq, t: e.T, eventID: e.EventID})
		t.inTransitAnswer(e, id, f.method)
		return f.method
	}
	if id == "null" && e.Kind == "error" && t.invalidDelivered > 0 {
		t.invalidDelivered--
		return ""
	}
	if st, ok := t.errorExchanges[e.Exchange]; ok && e.Kind == "error" {
		delete(t.errorExchanges, e.Exchange)
		switch {
		case id == "null", id == st.request:
			// The body of an HTTP error status: refusing a notification or
			// a response, it "MAY comprise a JSON-RPC error response that
			// has no id" (Streamable HTTP, Sending Messages to the
			// Server); refusing a request, it carries that request's id,
			// or null if the server did not read it. The status answered.
			return ""
		case t.tolerated[id] == 0 && t.answers.get(id) == nil:
			// The status has answered the request of its exchange; the
			// body's error names no request at all.
			if t.badBodyIDs == nil {
				t.badBodyIDs = &aggregate{req: &reports.Request{ID: id}}
			}
			t.badBodyIDs.add(id, evidenceOf(e))
			if !slices.Contains(t.bodyStatuses, st.status) {
				t.bodyStatuses = append(t.bodyStatuses, st.status)
			}
			return ""
		}
	}
	if t.tolerated[id] > 0 {
		if t.tolerated[id]--; t.tolerated[id] == 0 {
			delete(t.tolerated, id)
		}
		return ""
	}
	if a := t.answers.get(id); a != nil {
		replay := e.EventID != "" && e.EventID == a.eventID
		if replay && a.undelivered {
			// The event that carried the answer, which the client never
			// got, sent again on the stream it resumed (Last-Event-ID).
			return ""
		}
		if a.cancelled {
			a.cancelled, a.seq, a.t = false, e.Seq, e.T
			return ""
		}
		g := t.dups[a.method]
		if g == nil {
			g = &aggregate{method: a.method, req: &reports.Request{ID: id, Method: a.method}}
			t.dups[a.method] = g
			t.dupKeys = append(t.dupKeys, a.method)
		}
		first := reports.Evidence{Seq: a.seq, TUS: a.t, Type: wire.EventReceived, Dir: j.p.out,
			Excerpt: fmt.Sprintf("the first answer to %s (id %s); see the transcript", a.method, id)}
		if replay {
			g.replayed++
		}
		g.add(id, first, evidenceOf(e))
		return ""
	}
	t.settle(e.T)
	t.suspects = append(t.suspects, suspect{id: id, ev: evidenceOf(e)})
	if len(t.suspects) > maxSuspects {
		t.settle(never)
	}
	return ""
}

// settle turns the suspects older than suspectWindow at time now into
// unknown answers.
func (t *tracker) settle(now int64) {
	n := 0
	for _, s := range t.suspects {
		if now != never && now-s.ev.TUS < suspectWindow {
			break
		}
		if t.unknown == nil {
			t.unknown = &aggregate{req: &reports.Request{ID: s.id}}
		}
		if s.id == "null" {
			t.unknown.null = true
		}
		t.unknown.add(s.id, s.ev)
		n++
	}
	t.suspects = t.suspects[n:]
}

// answerFindings reports the duplicate and unknown answers.
func (t *tracker) answerFindings(j *Judger) []reports.Finding {
	// An answer to an id of ours that no injected request ever matched was
	// asked by nobody.
	for i := range t.earlyInjected {
		a := &t.earlyInjected[i]
		j.pr.check(j, a, "")
		t.suspects = append(t.suspects, suspect{id: a.ID, ev: evidenceOf(a)})
	}
	t.earlyInjected = nil
	t.settle(never)
	var fs []reports.Finding
	for _, m := range t.dupKeys {
		g := t.dups[m]
		msg := fmt.Sprintf("the %s answered %s (id %s) more than once", j.p.name, m, g.ids[0])
		if g.count > 1 {
			msg = fmt.Sprintf("the %s sent %d extra answers to %s requests (ids %s)", j.p.name, g.count, m, idList(g.ids, g.count))
		}
		if g.replayed > 0 {
			msg += fmt.Sprintf("; %d of them replayed under the event id the client already had, on a resumed stream (Last-Event-ID): a resumption replays only what the cut stream did not deliver, never what went out on another stream", g.replayed)
		}
		f := reports.NewFinding(reports.RuleDuplicateResponse, msg, g.evidence)
		f.Request = g.req
		fs = append(fs, f)
	}
	if g := t.unknown; g != nil {
		msg := fmt.Sprintf("the %s answered id %s, which was never requested", j.p.name, g.ids[0])
		if g.count > 1 {
			msg = fmt.Sprintf("the %s sent %d answers for ids never requested (%s)", j.p.name, g.count, idList(g.ids, g.count))
		}
		if g.null {
			msg += "; an error with id null answers an unparseable frame, and none was sent"
		}
		f := reports.NewFinding(reports.RuleUnknownResponse, msg, g.evidence)
		f.Request = g.req
		fs = append(fs, f)
	}
	if g := t.badBodyIDs; g != nil {
		// An SDK's sentinel repeats: each id is named once.
		distinct := slices.Compact(slices.Sorted(slices.Values(g.ids)))
		statuses := make([]string, len(t.bodyStatuses))
		for i, s := range t.bodyStatuses {
			statuses[i] = "HTTP " + strconv.Itoa(s)
		}
		msg := fmt.Sprintf("the %s answered %d %s with %s, whose %s an error with an id no request has (%s): that error belongs to the request of its exchange, so it carries that request's id, or null when the id could not be read (the Python SDK's 1.x releases write \"server-error\")",
			j.p.name, g.count, words.Plural(g.count, "request", "requests"), strings.Join(statuses, " and "),
			words.Plural(g.count, "body holds", "bodies hold"), idList(distinct, len(distinct)+g.count-len(g.ids)))
		f := reports.NewFinding(reports.RuleErrorBodyID, msg, g.evidence)
		f.Request = g.req
		fs = append(fs, f)
	}
	return fs
}

// outcome of one request still open when the session ended.
type openOutcome struct {
	r       *openReq
	rule    string
	variant string // how the finding reads: the probe's result, or the loss
	ev      []reports.Evidence
	// waited says how long the request was given: the deadline, what a
	// stall or progress added, and when progress stopped.
	waited string
}

// judgeOpen decides every request still open at the end of the session.
func (t *tracker) judgeOpen(j *Judger) []reports.Finding {
	if len(t.bySeq) == 0 {
		return nil
	}
	seqs := make([]int64, 0, len(t.bySeq))
	for s := range t.bySeq {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	endT := j.endT()
	pc := &j.pc
	lossT, lossEv, lossWords, lost := pc.loss(j.p.name)
	var outs []openOutcome
	// Indeterminate requests are noted per method and reason, like the
	// findings: two hundred calls held by one stall are one note.
	type noteGroup struct {
		method, reason string
		ids            []string
		n              int
	}
	var groups []*noteGroup
	byReason := map[string]*noteGroup{}
	for _, s := range seqs {
		r := t.bySeq[s]
		r.fwd.Excerpt = fmt.Sprintf("forwarded the frame of seq %d", r.recv.Seq)
		note := func(reason string) {
			k := r.method + "\x00" + reason
			g := byReason[k]
			if g == nil {
				g = &noteGroup{method: r.method, reason: reason}
				byReason[k] = g
				groups = append(groups, g)
			}
			g.n++
			if len(g.ids) < 5 {
				g.ids = append(g.ids, r.id)
			}
		}
		d, forever, capped := j.deadlineOf(r, endT)
		sig, hc := pc.ourSignal, pc.halfClose
		unclassified := t.unclassifiedOut > r.fwd.Seq
		if a := r.acceptedBy; a != nil {
			o := openOutcome{r: r, rule: reports.RuleAcceptedNoStream, variant: acceptedWords(j.p.name, a)}
			o.ev = []reports.Evidence{a.cut.ev, r.recv, a.ev}
			outs = append(outs, o)
			continue
		}
		if r.cut != nil {
			note(cutNote(j.p.name, r.cut))
			continue
		}
		if lost && lossT <= d {
			// Whether a fault came before the loss is a question of order,
			// which seqs answer even when two events share a microsecond.
			switch {
			case hc != nil && hc.Seq < lossEv.Seq:
				note(fmt.Sprintf("unanswered, but mcpchaos had closed the %s's output (%s) before it ended: the answer could not be read", j.p.name, hc.Excerpt))
			case sig != nil && sig.Seq < lossEv.Seq:
				note(fmt.Sprintf("unanswered when the %s ended, after mcpchaos signalled it before the deadline (%s)", j.p.name, sig.Excerpt))
			case unclassified:
				note(fmt.Sprintf("unanswered, but the %s wrote a line too long to classify after the request: it may have been the answer", j.p.name))
			default:
				o := openOutcome{r: r, rule: reports.RuleLostResponse, variant: lossWords}
				o.ev = []reports.Evidence{r.recv, r.fwd}
				if c := pc.stdinClose; c != nil && c.Seq < lossEv.Seq {
					o.ev = append(o.ev, *c)
					o.variant += " after its stdin closed (" + pc.stdinDetail + ")"
					// Told to shut down, by the client or by an early-EOF
					// fault alike: the spec asks it to exit, not to answer
					// (DESIGN.md), so the loss is a warning; --strict fails it.
					o.rule = reports.RuleLostAtShutdown
					o.variant += ", so it was shutting down"
				}
				o.ev = append(o.ev, lossEv)
				outs = append(outs, o)
			}
			continue
		}
		switch {
		case forever:
			note(fmt.Sprintf("unanswered, but a fault (a stall, a throttle, a SIGSTOP, a stderr flood) held the %s's output before the deadline and did not lift: the answer may be waiting in the pipe", j.p.name))
		case hc != nil && hc.TUS <= d:
			note(fmt.Sprintf("unanswered, but mcpchaos closed the %s's output (%s) before the deadline: the answer could not be read", j.p.name, hc.Excerpt))
		case sig != nil && sig.TUS <= d:
			note(fmt.Sprintf("unanswered, but mcpchaos signalled the %s before the deadline (%s)", j.p.name, sig.Excerpt))
		case unclassified:
			note(fmt.Sprintf("unanswered, but the %s wrote a line too long to classify after the request: it may have been the answer", j.p.name))
		case endT < d:
			note("unanswered when the transcript ends, before the deadline")
		case t.asked.waitedOn(r, d) != nil:
			l := t.asked.waitedOn(r, d)
			if l.answer {
				note(fmt.Sprintf("unanswered, but the answer to the %s's %s (id %s), sent while it was open, never reached it (%s): the handler may be waiting for it",
					j.p.name, l.method, l.id, l.why))
			} else {
				note(fmt.Sprintf("unanswered, but the %s sent %s (id %s) while it was open, and mcpchaos did not deliver it (%s): the handler may be waiting for its answer",
					j.p.name, l.method, l.id, l.why))
			}
		case r.sharedAnswered != nil:
			other := *r.sharedAnswered
			o := openOutcome{r: r, rule: reports.RuleUnansweredReusedID, waited: j.waitedWords(r, d, capped)}
			o.ev = []reports.Evidence{r.recv, r.fwd, other}
			o.variant = fmt.Sprintf("while the %s answered the other request under id %s (seq %d): the client must not reuse an id in flight, and a %s may refuse to run a second request under an id it holds, but one that drops it without an error leaves the call waiting forever", j.p.name, r.id, other.Seq, j.p.name)
			outs = append(outs, o)
		case r.lastNote != nil && endT-r.lastNote.TUS < j.deadlineUS && r.lastNote.TUS > r.fwd.TUS:
			// Still sending on the request's stream when the wait
			// ended: slower than the deadline, not stuck.
			o := openOutcome{r: r, rule: reports.RuleUnansweredActive, waited: j.waitedWords(r, d, capped)}
			o.ev = []reports.Evidence{r.recv, r.fwd, *r.lastNote}
			o.variant = fmt.Sprintf("but the %s kept sending on the request's stream (%d %s, the last at %s), so its handler runs, slower than the deadline; "+
				"only progress notifications for the request's token restart a deadline, so a client would have given up on it",
				j.p.name, r.notes, words.Plural(r.notes, "notification", "notifications"), words.Duration(r.lastNote.TUS))
			outs = append(outs, o)
		case r.malformed != "" && r.by == "" && j.p.name == "server":
			// Dropped, not stuck: the request was one no conforming
			// client sends (the hostile workload's).
			o := openOutcome{r: r, rule: reports.RuleMalformedUnanswered, waited: j.waitedWords(r, d, capped)}
			o.ev = []reports.Evidence{r.recv, r.fwd}
			o.variant = fmt.Sprintf("the request is malformed (%s), and the %s dropped it without the error JSON-RPC owes an invalid request (-32600 Invalid Request, or -32602 Invalid params)", r.malformed, j.p.name)
			outs = append(outs, o)
		default:
			o := openOutcome{r: r, rule: reports.RuleUnanswered}
			o.ev = []reports.Evidence{r.recv, r.fwd}
			o.waited = j.waitedWords(r, d, capped)
			if r.lastProgress != nil {
				o.ev = append(o.ev, *r.lastProgress)
			}
			if r.lastNote != nil {
				o.ev = append(o.ev, *r.lastNote)
			}
			p := r.probe
			if p == nil && t.lastProbe != nil && t.lastProbe.ev.Seq > r.fwd.Seq {
				p = t.lastProbe
			}
			o.variant = probeWords(j.p.name, p)
			if p != nil {
				o.ev = append(o.ev, p.ev)
				if p.answer != nil {
					o.ev = append(o.ev, *p.answer)
				}
			}
			outs = append(outs, o)
		}
	}
	for _, g := range groups {
		what := fmt.Sprintf("%s (id %s)", g.method, g.ids[0])
		if g.n > 1 {
			what = fmt.Sprintf("%d %s requests (ids %s)", g.n, g.method, idList(g.ids, g.n))
		}
		j.notes.add(what + " " + g.reason)
	}
	return t.openFindings(j, outs)
}

// probeWords says what the liveness probe tells about a hang.
func probeWords(name string, p *probeInfo) string {
	what := "liveness ping"
	if p != nil && p.method != "" && p.method != "ping" {
		what = "liveness probe (" + p.method + ")"
	}
	switch {
	case p == nil:
		return "no liveness ping was sent, so whether its receive loop runs is unknown"
	case p.answer != nil:
		return fmt.Sprintf("the %s answered a %s, so its receive loop runs but the handler is stuck", name, what)
	}
	return what + " unanswered: the " + name + "'s receive loop is stuck"
}

// openFindings groups the outcomes by kind, method and wording, so that two
// hundred stuck tool calls are one finding with a count.
func (t *tracker) openFindings(j *Judger, outs []openOutcome) []reports.Finding {
	type group struct {
		first openOutcome
		ids   []string
		n     int
		ev    []reports.Evidence
	}
	var keys []string
	groups := map[string]*group{}
	for _, o := range outs {
		k := o.rule + "\x00" + o.r.method + "\x00" + o.variant + "\x00" + o.r.by + "\x00" + o.waited
		g := groups[k]
		if g == nil {
			g = &group{first: o, ev: o.ev}
			groups[k] = g
			keys = append(keys, k)
		} else {
			g.ev = addEvidence(g.ev, o.r.recv)
		}
		g.n++
		if len(g.ids) < 5 {
			g.ids = append(g.ids, o.r.id)
		}
	}
	var fs []reports.Finding
	for _, k := range keys {
		g := groups[k]
		o := g.first
		what := fmt.Sprintf("%s (id %s)", o.r.method, o.r.id)
		if g.n > 1 {
			what = fmt.Sprintf("%d %s requests (ids %s)", g.n, o.r.method, idList(g.ids, g.n))
		}
		if o.r.by != "" {
			what += " injected by fault " + o.r.by
		}
		msg := fmt.Sprintf("%s left unanswered: the %s", what, o.variant)
		switch o.rule {
		case reports.RuleUnanswered:
			msg = fmt.Sprintf("%s unanswered %s; %s", what, o.waited, o.variant)
		case reports.RuleUnansweredActive, reports.RuleUnansweredReusedID, reports.RuleMalformedUnanswered:
			msg = fmt.Sprintf("%s unanswered %s, %s", what, o.waited, o.variant)
		}
		f := reports.NewFinding(o.rule, msg, addEvidence(nil, g.ev...))
		f.Request = &reports.Request{ID: o.r.id, Method: o.r.method, Tool: o.r.tool}
		fs = append(fs, f)
	}
	return fs
}

// deadlineOf is when r became overdue. The deadline runs only while the
// peer's answer could be read (stalls push it back), and each progress
// notification for r restarts it, as the MCP timeout rules allow, but never
// past the maximum counted from when r was sent (capped then says so).
func (j *Judger) deadlineOf(r *openReq, endT int64) (d int64, forever, capped bool) {
	d, forever = j.st.deadline(r.fwd.TUS, j.deadlineUS, endT)
	if r.lastProgress == nil || forever {
		return d, forever, false
	}
	if pd, pf := j.st.deadline(r.lastProgress.TUS, j.deadlineUS, endT); pd > d {
		d, forever = pd, pf
	}
	if c, cf := j.st.deadline(r.fwd.TUS, max(j.maxDeadlineUS, j.deadlineUS), endT); !cf && c < d {
		return c, false, true
	}
	return d, forever, false
}

// waitedWords says how long a hung request was given, for its finding:
// "after 5s", with what a stall added, or how its progress ran out.
func (j *Judger) waitedWords(r *openReq, d int64, capped bool) string {
	if r.lastProgress == nil {
		w := "after " + words.Duration(j.deadlineUS)
		if ext := d - r.fwd.TUS - j.deadlineUS; ext > 0 && len(j.st.shares) > 0 {
			w += fmt.Sprintf(" of the CPU time the %s could have had (%s on the wall clock: the machine's cores were shared, or a fault held its output)", j.p.name, words.Duration(d-r.fwd.TUS))
		} else if ext > 0 {
			w += fmt.Sprintf(" (plus %s while a fault held the %s's output)", words.Duration(ext), j.p.name)
		}
		return w
	}
	n := fmt.Sprintf("%d progress %s", r.progress, words.Plural(r.progress, "notification", "notifications"))
	if capped {
		return fmt.Sprintf("after %s, the maximum any request may run (--max-deadline), although it made progress (%s, the last at %s)",
			words.Duration(d-r.fwd.TUS), n, words.Duration(r.lastProgress.TUS))
	}
	return fmt.Sprintf("after it made progress and then stopped: %s, the last at %s, then none for %s",
		n, words.Duration(r.lastProgress.TUS), words.Duration(d-r.lastProgress.TUS))
}

// sessionEnded settles the requests in flight when a fault ended the
// session at the server (end-session: a DELETE with its session id). The
// specification says what a server owes a terminated session's later
// requests (404), not what becomes of those still running: it may finish
// or drop them. What the server does with them (crash, hang its other
// sessions) is judged elsewhere; their missing answers are noted.
func (t *tracker) sessionEnded(j *Judger, e *wire.Event) {
	var open []string
	for seq, f := range t.pending {
		if f.kind == frameRequest {
			// Received and on its way: the proxy serves each exchange on a
			// goroutine of its own, so its forwarded event can come after
			// the DELETE's answer, and its answer after that. It may be
			// answered once, as those already forwarded may.
			open = append(open, f.id)
			t.unpend(seq, f)
			t.answers.put(answeredEntry{id: f.id, method: f.method, seq: e.Seq, t: e.T, cancelled: true})
		}
	}
	for _, list := range t.open {
		for _, r := range slices.Clone(list) {
			open = append(open, r.id)
			t.closeOpen(r)
			t.answers.put(answeredEntry{id: r.id, method: r.method, seq: e.Seq, t: e.T, cancelled: true})
		}
	}
	if len(open) == 0 {
		return
	}
	// Ids as sent: numbers in numeric order (shorter first), then strings.
	slices.SortFunc(open, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	ids := open
	if len(ids) > 6 {
		ids = append(slices.Clone(ids[:6]), fmt.Sprintf("%d more", len(open)-6))
	}
	j.notes.add(fmt.Sprintf("%d %s in flight (ids %s) when fault %s ended the session at the server: their answers are not owed (a terminated session's running requests may be finished or dropped)",
		len(open), words.Plural(len(open), "request was", "requests were"), strings.Join(ids, ", "), e.Fault))
}
