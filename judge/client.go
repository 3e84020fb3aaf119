package judge

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Judging a client program (session role "client", from mcpchaos
// test-client). The transcript is that of a wrap process between the client
// program and a server, so c2s is what the client wrote and s2c what it was
// sent; process events without a peer are the server's, and events with
// peer "client" are the ones the test-client runner recorded about the
// client program: its start, its stderr, the signals the runner had to send
// it, its exit.
//
// The server is not under test: its problems are not findings. The client's
// are: not exiting by its deadline (hang), a crash signature on its stderr
// or, when the scenario leaves every call answerable, a failing exit
// (crash), server requests it left unanswered when it exited
// (lost-response), answers twice or to ids never used (duplicate-response,
// unknown-response), frames that break the protocol (protocol-violation).

// Expectations of a client under test (the session event's expect).
const (
	expectSuccess = "success"
	expectFailure = "failure"
)

// maxEarly bounds the client's events buffered before the session event.
const maxEarly = 256

// clientJudge is what the judge keeps about the client program.
type clientJudge struct {
	expect string

	started *reports.Evidence
	// sigs are the signals the runner sent the client (the first few): it
	// was still running past its deadline. sigNames names them.
	sigs     []reports.Evidence
	sigNames []string
	// serverLost is the first sign that the server went away before the
	// client had ended the session: the client's input ended, the server
	// ended its output, or the server exited. clientEnded is set once the
	// relay shut the server down because the client side ended.
	serverLost  *reports.Evidence
	clientEnded bool

	// frozen is set once the client was signalled or exited: what it did
	// and was sent until then is what the hang finding describes.
	frozen bool

	// calls are the client's requests to the server not yet answered to
	// it, by id; bySeq finds a request by its received seq (for forwarded
	// and dropped), answerOf a call by the received seq of its answer.
	calls    map[string]*clientCall
	bySeq    map[int64]*clientCall
	answerOf map[int64]*clientCall
	last     *clientCall

	// since is what was sent toward the client (notifications and the
	// server's requests, in runs of one method) after its last frame.
	since     []arrival
	sinceMore int

	probes     []*probeInfo
	moreProbes int

	// lingered is a linger fault ignoring the client's EOF (or a signal to
	// mcpchaos wrap): the server end did not go when told, and a client
	// must escalate rather than wait for ever.
	lingered *reports.Evidence
	// escalated is the client signalling the lingering server end: the
	// ladder's escalation seen, which excuses the time the ladder takes.
	escalated *reports.Evidence
	// gluedBy is the fault whose truncated frame (no line ending) the next
	// frame toward the client is read glued to: that frame never arrives.
	gluedBy string
	// serverGarbage is the first frame the server sent toward the client
	// that is not a valid JSON-RPC message (a resumed stream replaying a
	// priming event stored as {}): a client whose SDK logs the parse error
	// and goes on is reporting the server's fault.
	serverGarbage *reports.Evidence
}

// clientCall is one request the client sent to the server.
type clientCall struct {
	id, method string
	recv       reports.Evidence
	// dropped says why mcpchaos never delivered the request to the server.
	dropped string
	// lostAt is when the request or its answer was dropped (dropped,
	// answerDropped): from then on the call could not be answered.
	lostAt *reports.Evidence
	// answer is the server's answer, once delivered to the client;
	// answerDropped says why an answer was not delivered. pending is the
	// answer received from the server and not yet delivered.
	answer        *reports.Evidence
	deliveredUS   int64 // when the answer was written to the client
	answerDropped string
	pending       *reports.Evidence
	// resumable says whether the answer last received came in an SSE
	// event with an id (a cut stream can be resumed past it); unresumable
	// whether it came in one without.
	resumable, unresumable bool
	// cancelledBy is the fault that cancelled the request toward the
	// server on the client's behalf: the server may then never answer.
	cancelledBy string
	// after is what was sent toward the client just before it sent this
	// request (nil when an answer or its own frame came in between).
	after *arrival
}

// arrival is a run of frames of one method sent toward the client.
type arrival struct {
	method  string
	request bool
	n       int
	first   reports.Evidence
	// answered is set once an answer to one of the client's requests was
	// sent toward the client after this run.
	answered bool
}

const (
	maxArrivals     = 6
	maxClientProbes = 256
)

func newClientJudge(expect string) *clientJudge {
	return &clientJudge{expect: expect, calls: map[string]*clientCall{},
		bySeq: map[int64]*clientCall{}, answerOf: map[int64]*clientCall{}}
}

// clientEvent handles an event the runner recorded about the client program.
func (j *Judger) clientEvent(e *wire.Event) {
	c, pc := j.cl, &j.pc
	switch e.Type {
	case wire.EventProcessStarted:
		if c.started == nil {
			ev := evidenceOf(e)
			c.started = &ev
		}
	case wire.EventSignal:
		if !e.ByUs {
			return
		}
		ev := evidenceOf(e)
		c.frozen = true
		if len(c.sigs) < 4 {
			c.sigs = append(c.sigs, ev)
			c.sigNames = append(c.sigNames, e.Signal)
		}
		if pc.ourSignal == nil {
			pc.ourSignal = &ev
		}
		// The runner's signals to the client program end it at its deadline,
		// as the ladder ends a server.
		if pc.ladderSignal == nil {
			pc.ladderSignal = &ev
		}
		if pc.sent == nil {
			pc.sent = map[string]bool{}
		}
		pc.sent[e.Signal] = true
	case wire.EventProcessExited:
		if pc.exit == nil {
			c.frozen = true
			pc.exited(e)
		}
	case wire.EventStderr:
		j.cr.stderr(e)
	}
}

// serverEvent notes what the server's own events tell about the client's
// situation: whether the server went away under it.
func (c *clientJudge) serverEvent(j *Judger, e *wire.Event) {
	if c.serverLost != nil || c.clientEnded || j.pc.stdoutEOF != nil {
		return
	}
	if e.Type == wire.EventPipeClosed && e.Pipe == wire.PipeServerInput {
		for _, p := range clientShutdown {
			if strings.HasPrefix(e.Detail, p) {
				c.clientEnded = true
			}
		}
		return
	}
	switch {
	case e.Type == wire.EventProcessExited,
		e.Type == wire.EventPipeClosed && e.Pipe == wire.PipeServerOutput && !e.ByUs,
		e.Type == wire.EventPipeClosed && e.Pipe == wire.PipeClientOutput:
		ev := evidenceOf(e)
		if e.Type == wire.EventProcessExited {
			ev.Excerpt = "the server " + e.ExitWords()
		}
		c.serverLost = &ev
	}
}

// received follows a frame between the client and the server.
func (c *clientJudge) received(e *wire.Event) {
	if c.frozen || e.Dir == "s2c" && isPiece(e) {
		return
	}
	switch e.Dir {
	case "c2s":
		if (e.Kind == "response" || e.Kind == "error") && strings.HasPrefix(e.ID, wire.ProbeIDPrefix) {
			return // the receive loop runs; the client did nothing new
		}
		var after *arrival
		if n := len(c.since); n > 0 && !c.since[n-1].answered {
			a := c.since[n-1]
			after = &a
		}
		c.since, c.sinceMore = c.since[:0], 0
		if e.Kind != "request" || isPiece(e) {
			return
		}
		k := &clientCall{id: e.ID, method: e.Method, recv: evidenceOf(e), after: after}
		c.calls[e.ID] = k
		c.bySeq[e.Seq] = k
		c.last = k
	case "s2c":
		if e.Problem != "" && e.Fault == "" && c.serverGarbage == nil {
			ev := evidenceOf(e)
			c.serverGarbage = &ev
		}
		switch e.Kind {
		case "response", "error":
			if k := c.calls[e.ID]; k != nil {
				c.answerOf[e.Seq] = k
				k.pending = &reports.Evidence{Seq: e.Seq, TUS: e.T, Type: e.Type, Dir: e.Dir}
				k.resumable, k.unresumable = e.EventID != "", e.EventID == "" && e.Exchange != 0
				if n := len(c.since); n > 0 {
					c.since[n-1].answered = true
				}
			}
		case "notification", "request":
			c.arrive(e)
		}
	}
}

// injected follows a frame mcpchaos wrote toward the client.
func (c *clientJudge) injected(e *wire.Event) {
	if c.frozen || e.Dir != "s2c" {
		return
	}
	if truncated(e) {
		c.gluedBy = e.Fault
		return
	}
	if e.Kind == "notification" || e.Kind == "request" {
		c.arrive(e)
	}
}

// cancelledForIt follows a frame mcpchaos wrote toward the server: a
// cancellation of one of the client's requests, sent in its name.
func (c *clientJudge) cancelledForIt(e *wire.Event) {
	if c.frozen || e.Kind != "notification" || e.Method != "notifications/cancelled" {
		return
	}
	if k := c.calls[cancelledID(e)]; k != nil && k.answer == nil {
		k.cancelledBy = e.Fault
	}
}

func (c *clientJudge) arrive(e *wire.Event) {
	req := e.Kind == "request"
	if n := len(c.since); n > 0 && c.since[n-1].method == e.Method && c.since[n-1].request == req {
		c.since[n-1].n++
		return
	}
	if len(c.since) >= maxArrivals {
		// Keep the latest runs: what came last is what it went quiet on.
		c.sinceMore += c.since[0].n
		c.since = slices.Delete(c.since, 0, 1)
	}
	c.since = append(c.since, arrival{method: e.Method, request: req, n: 1, first: evidenceOf(e)})
}

func (c *clientJudge) forwarded(e *wire.Event) {
	switch e.Dir {
	case "c2s":
		delete(c.bySeq, e.Of)
	case "s2c":
		k := c.answerOf[e.Of]
		delete(c.answerOf, e.Of)
		if by := c.gluedBy; by != "" {
			c.gluedBy = ""
			if k != nil && !c.frozen {
				k.pending = nil
				k.answerDropped = "it was read glued to the truncated frame fault " + by + " wrote before it"
			}
			return
		}
		if e.Kind == "response" || e.Kind == "error" {
			// An answer an id fault translated back to the id the client
			// gave its request: that id is what the client got.
			if k != nil && k.id != e.ID {
				k.pending = nil
			}
			if k = c.calls[e.ID]; k != nil && k.pending == nil {
				k.pending = &reports.Evidence{Seq: e.Of, TUS: e.T, Type: wire.EventReceived, Dir: e.Dir}
			}
		}
		if k == nil {
			return
		}
		if c.frozen {
			return
		}
		if k.pending != nil {
			k.answer, k.pending, k.deliveredUS = k.pending, nil, e.T
			k.answer.Excerpt = fmt.Sprintf("the server's answer to %s (id %s), delivered to the client", k.method, k.id)
		}
		if c.calls[k.id] == k {
			delete(c.calls, k.id)
		}
	}
}

func (c *clientJudge) dropped(e *wire.Event) {
	if k := c.bySeq[e.Of]; k != nil {
		delete(c.bySeq, e.Of)
		if !c.frozen {
			k.dropped = e.Detail
			k.lost(e)
		}
	}
	if k := c.answerOf[e.Of]; k != nil {
		delete(c.answerOf, e.Of)
		if !c.frozen {
			k.pending = nil
			k.answerDropped = e.Detail
			k.lost(e)
		}
	}
}

func (k *clientCall) lost(e *wire.Event) {
	if k.lostAt == nil {
		ev := evidenceOf(e)
		k.lostAt = &ev
	}
}

func (c *clientJudge) probe(p *probeInfo) {
	if c.frozen || p == nil || !p.informative {
		return
	}
	if len(c.probes) >= maxClientProbes {
		c.moreProbes++
		c.probes = slices.Delete(c.probes, 0, 1)
	}
	c.probes = append(c.probes, p)
}

// clientFindings judges the client program; the request, answer and
// protocol checks are the shared ones, pointed at the client.
func (j *Judger) clientFindings() []reports.Finding {
	c := j.cl
	var fs []reports.Finding
	hang, killed := c.hang(j)
	fs = append(fs, hang...)
	fs = append(fs, j.clientSessionFindings(len(hang) > 0 || killed)...)
	fs = append(fs, c.openRequests(j, killed)...)
	fs = append(fs, j.tr.answerFindings(j)...)
	crashes := j.cr.signatureFindings(j)
	if len(crashes) == 0 && !killed {
		// A client that did not end on its own has no exit status of its
		// own to judge.
		crashes = c.exitFindings(j)
	}
	fs = append(fs, crashes...)
	fs = append(fs, j.pr.findings(j)...)
	return fs
}

// hang decides whether the client was still running past its deadline.
// killed reports that it did not end on its own (signalled, still
// running, or exited past its deadline only once a liveness probe reached
// it): its unanswered server requests and its exit status are then the
// hang's business.
func (c *clientJudge) hang(j *Judger) (fs []reports.Finding, killed bool) {
	pc := &j.pc
	var start int64
	if c.started != nil {
		start = c.started.TUS
	}
	var sig *reports.Evidence
	if len(c.sigs) > 0 && (pc.exit == nil || c.sigs[0].Seq < pc.exit.Seq) {
		sig = &c.sigs[0]
	}
	endT := j.lastT
	deadline := words.Duration(j.deadlineUS)
	horizon := max(j.hangAfterUS, j.deadlineUS)
	// moment is when the hang became certain; what came at or after it (in
	// time, and in seq for the signal) is not what it hung on.
	var moment int64
	momentSeq := int64(never)
	// lateExit is a client that outran its deadline and exited after
	// mcpchaos's liveness probe reached it, without answering it: the
	// probe, not the client, may have ended the wait (a client whose write
	// path died raises on answering it), so the exit does not excuse the
	// overrun. A client that answered the probe and then exited was slow,
	// not stuck, as one that no probe reached.
	lateExit := pc.exit != nil && sig == nil && pc.exit.TUS-start > j.deadlineUS && c.unansweredProbeBefore(pc.exit.Seq)
	switch {
	case sig != nil:
		moment, momentSeq = sig.TUS, sig.Seq
	case lateExit:
		moment, momentSeq = start+j.deadlineUS, pc.exit.Seq
	case pc.exit != nil && pc.exit.TUS-start > j.deadlineUS:
		return c.late(j, start), false
	case pc.exit != nil:
		return nil, false
	case c.started == nil && len(c.sigs) == 0:
		j.unknown.add("the transcript records nothing about the client program (no event with peer client): whether it exited was not judged")
		return nil, true
	case endT-start < j.deadlineUS:
		j.unknown.add(fmt.Sprintf("the transcript ends %s after the client started, before its %s deadline, and it had not exited: whether it hangs is unknown", words.Duration(endT-start), deadline))
		return nil, true
	case endT-start < horizon:
		j.unknown.add(fmt.Sprintf("the transcript ends %s after the client started, past its %s deadline but before its %s hang horizon, and it had not exited: whether it hangs or gives up at a timeout of its own is unknown", words.Duration(endT-start), deadline, words.Duration(horizon)))
		return nil, true
	default:
		moment = start + horizon
	}
	if j.st.heldAt(moment, never) {
		j.unknown.add(fmt.Sprintf("the client had not exited by its %s deadline, but a stall fault had stopped mcpchaos reading its output: it may have been blocked writing", deadline))
		return nil, true
	}

	var parts []string
	head := "the client had not exited by its " + deadline + " deadline"
	beyond := ""
	if horizon > j.deadlineUS && !lateExit {
		head = fmt.Sprintf("the client had not exited by its %s hang horizon", words.Duration(horizon))
		beyond = fmt.Sprintf(", %s past its %s deadline: no request timeout of its own ended the wait", words.Duration(horizon-j.deadlineUS), deadline)
	}
	switch {
	case sig != nil:
		var names []string
		for i, s := range c.sigs {
			if pc.exit == nil || s.Seq < pc.exit.Seq {
				names = append(names, c.sigNames[i])
			}
		}
		head += " (mcpchaos sent it " + strings.Join(names, ", then ") + ")"
	case lateExit:
		head += fmt.Sprintf(" (it exited only %s after it started, once mcpchaos's liveness probe had reached it)", words.Duration(pc.exit.TUS-start))
	default:
		head += fmt.Sprintf(" (it was still running when the transcript ends, %s after it started)", words.Duration(endT-start))
	}
	parts = append(parts, head+beyond)
	var ev []reports.Evidence
	if q := c.quietWords(); q != "" {
		parts = append(parts, "it went quiet after "+q)
		ev = append(ev, c.since[len(c.since)-1].first)
	}
	var req *reports.Request
	if k := c.last; k != nil {
		req = &reports.Request{ID: k.id, Method: k.method}
		parts = append(parts, c.lastCallWords(k))
		ev = append(ev, k.recv)
		if k.after != nil {
			ev = append(ev, k.after.first)
		}
		if k.answer != nil {
			ev = append(ev, *k.answer)
		}
	} else {
		parts = append(parts, "it had sent the server no request")
	}
	if w := j.tr.openWords(); w != "" {
		parts = append(parts, w)
	}
	in := pc.stdinClose
	inputEnded := in != nil && in.TUS <= moment && in.Seq < momentSeq
	// Its input ending is news only when the server ended it: after the
	// client closed its output, the relay closes its input in turn.
	if inputEnded && (pc.stdoutEOF == nil || in.Seq < pc.stdoutEOF.Seq) {
		parts = append(parts, fmt.Sprintf("its input had ended at %s (%s) and it did not fail", words.Duration(in.TUS), pc.stdinDetail))
		ev = append(ev, *in)
	}
	if out := pc.stdoutEOF; out != nil && out.TUS <= moment && out.Seq < momentSeq {
		parts = append(parts, fmt.Sprintf("it had closed its output to the server at %s but did not exit", words.Duration(out.TUS)))
		ev = append(ev, *out)
	}
	if l := c.lingered; l != nil && l.TUS <= moment && l.Seq < momentSeq {
		parts = append(parts, "the server end did not exit when told ("+l.Excerpt+"): a client must escalate to SIGTERM and SIGKILL rather than wait for ever")
		ev = append(ev, *l)
	}
	if w, stuck, pev := c.probeWords(inputEnded, lateExit); w != "" {
		if stuck && c.last != nil && c.last.answer != nil {
			// The answer was delivered and the loop that must read it does
			// not run: the agent-framework list_changed deadlock.
			w += ", typically in a handler that awaits a request whose answer only that loop can deliver"
		}
		parts = append(parts, w)
		ev = append(ev, pev...)
	}
	ev = append(ev, c.sigs...)
	if pc.exit != nil {
		ev = append(ev, *pc.exit)
	}
	ev = addEvidence(nil, ev...)
	slices.SortStableFunc(ev, func(a, b reports.Evidence) int { return cmp.Compare(a.Seq, b.Seq) })
	f := reports.NewFinding(reports.RuleClientHang, strings.Join(parts, "; "), ev)
	f.Request = req
	return []reports.Finding{f}, true
}

// late judges a client that exited on its own past its deadline but before
// its hang horizon: it gave up at a finite timeout of its own (or its
// shutdown took that long), which is not a hang, but its user waited. The
// warning says how long it took and from when its last call could not be
// answered: what it could have known sooner.
func (c *clientJudge) late(j *Judger, start int64) []reports.Finding {
	pc := &j.pc
	if e := c.escalated; e != nil {
		// Close, wait, SIGTERM, wait, SIGKILL: a ladder seen under way
		// takes the time its steps give, and ends in the client's exit.
		j.notes.add(fmt.Sprintf("the client exited %s after it started, past its %s deadline, having escalated its server's shutdown (%s): the ladder's waits, not a hang",
			words.Duration(pc.exit.TUS-start), words.Duration(j.deadlineUS), e.Excerpt))
		return nil
	}
	took := words.Duration(pc.exit.TUS - start)
	head := fmt.Sprintf("the client %s on its own only %s after it started, past its %s deadline", pc.exitWords(), took, words.Duration(j.deadlineUS))
	if j.hangAfterUS > j.deadlineUS {
		head += fmt.Sprintf(" but before its %s hang horizon", words.Duration(j.hangAfterUS))
	}
	parts := []string{head + ": late, not hung"}
	ev := []reports.Evidence{*pc.exit}
	var req *reports.Request
	if k := c.last; k != nil {
		req = &reports.Request{ID: k.id, Method: k.method}
		ev = append(ev, k.recv)
		s := fmt.Sprintf("its last request, %s (id %s)", k.method, k.id)
		switch {
		case k.answer != nil:
			s += fmt.Sprintf(", was answered at %s: what it waited on after that was its own", words.Duration(k.deliveredUS))
			ev = append(ev, *k.answer)
		case k.lostAt != nil:
			why := k.dropped
			if why == "" {
				why = k.answerDropped
			}
			then := "it could have failed the call then"
			switch {
			case k.answerDropped != "" && k.unresumable:
				then = "the server had sent the answer in an event with no id, so no resumption could bring it back: " + then
			case k.answerDropped != "" && k.resumable:
				then = "the server had sent the answer in an event with an id: it could have resumed the stream with Last-Event-ID (MCP 2025-11-25, Streamable HTTP › Resumability and Redelivery), or failed the call then"
			}
			s += fmt.Sprintf(", could not be answered from %s on (%s); %s, %s sooner", words.Duration(k.lostAt.TUS), why, then, words.Duration(pc.exit.TUS-k.lostAt.TUS))
			ev = append(ev, *k.lostAt)
		case k.cancelledBy != "":
			s += ", was cancelled toward the server by fault " + k.cancelledBy + ", which may leave it unanswered"
		default:
			s += ", was never answered"
		}
		parts = append(parts, s)
	}
	if p := c.lastProbe(); p != nil && p.answer != nil {
		parts = append(parts, "it answered a liveness ping past its deadline, so its receive loop ran while it waited")
		ev = append(ev, *p.answer)
	}
	ev = addEvidence(nil, ev...)
	slices.SortStableFunc(ev, func(a, b reports.Evidence) int { return cmp.Compare(a.Seq, b.Seq) })
	f := reports.NewFinding(reports.RuleClientLate, strings.Join(parts, "; "), ev)
	f.Request = req
	return []reports.Finding{f}
}

func (c *clientJudge) lastProbe() *probeInfo {
	if n := len(c.probes); n > 0 {
		return c.probes[n-1]
	}
	return nil
}

// unansweredProbeBefore reports whether the last liveness probe that reached
// the client before event seq was still unanswered then.
func (c *clientJudge) unansweredProbeBefore(seq int64) bool {
	for i := len(c.probes) - 1; i >= 0; i-- {
		if p := c.probes[i]; p.ev.Seq < seq {
			return p.answer == nil || p.answer.Seq > seq
		}
	}
	return false
}

// quietWords says what was sent toward the client after its last frame.
func (c *clientJudge) quietWords() string {
	if len(c.since) == 0 {
		return ""
	}
	var w []string
	if c.sinceMore > 0 {
		w = append(w, fmt.Sprintf("%d earlier frames", c.sinceMore))
	}
	for _, a := range c.since {
		w = append(w, a.words())
	}
	return joinAnd(w)
}

func (a *arrival) words() string {
	switch {
	case a.request && a.n == 1:
		return "a " + a.method + " request"
	case a.request:
		return fmt.Sprintf("%d %s requests", a.n, a.method)
	case a.n == 1:
		return a.method
	}
	return fmt.Sprintf("%d %s", a.n, a.method)
}

func joinAnd(w []string) string {
	switch len(w) {
	case 0:
		return ""
	case 1:
		return w[0]
	}
	return strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1]
}

// lastCallWords says what became of the client's last request.
func (c *clientJudge) lastCallWords(k *clientCall) string {
	s := fmt.Sprintf("its last request, %s (id %s)", k.method, k.id)
	if k.after != nil {
		s += ", sent after " + k.after.words()
	}
	s += ","
	switch {
	case k.answer != nil:
		s += " was answered, so it received the answer but is stuck"
	case k.dropped != "":
		s += " never reached the server (mcpchaos dropped it: " + k.dropped + "), so it waits for an answer that cannot come"
	case k.answerDropped != "":
		s += " was answered, but mcpchaos dropped the answer (" + k.answerDropped + "), so it waits for an answer that cannot come"
	case k.pending != nil:
		s += " was answered, but the answer had not reached it yet, so it waits for it"
	case k.cancelledBy != "":
		s += " was cancelled toward the server by fault " + k.cancelledBy + " and never answered (the spec lets a server leave a cancelled request unanswered), so it waits for an answer that may never come"
	default:
		s += " was never answered, so it waits for the server"
	}
	if n := len(c.calls); n > 1 || n == 1 && c.calls[k.id] != k {
		others := n
		if c.calls[k.id] == k {
			others--
		}
		s += fmt.Sprintf(" (%d earlier %s unanswered too)", others, words.Plural(others, "request", "requests"))
	}
	return s
}

// probeWords says what the liveness probes toward the client tell, and
// whether its receive loop is stuck (the last probe went unanswered).
func (c *clientJudge) probeWords(inputEnded, exitedAfter bool) (words string, stuck bool, ev []reports.Evidence) {
	n := len(c.probes)
	if n == 0 {
		if inputEnded {
			return "", false, nil
		}
		return "no liveness ping was sent to it, so whether its receive loop runs is unknown", false, nil
	}
	total := n + c.moreProbes
	answered := 0
	for _, p := range c.probes {
		if p.answer != nil {
			answered++
		}
	}
	last := c.probes[n-1]
	what, whats := "liveness ping", "liveness pings"
	if last.method != "" && last.method != "ping" {
		what, whats = "liveness probe ("+last.method+")", "liveness probes ("+last.method+")"
	}
	ev = []reports.Evidence{last.ev}
	if last.answer != nil {
		ev = append(ev, *last.answer)
	}
	switch {
	case exitedAfter && last.answer == nil:
		// It exited instead: its receive loop ran, but whatever it hung
		// on ended it rather than an answer.
		return "it exited without answering the " + what, false, ev
	case last.answer != nil && total == 1:
		return "it answered a " + what + ", so its receive loop runs", false, ev
	case last.answer != nil:
		return fmt.Sprintf("it answered %d of %d %s, the last included, so its receive loop runs", answered, total, whats), false, ev
	case answered == 0 && total == 1:
		return what + " unanswered: its receive loop is stuck", true, ev
	case answered == 0:
		return fmt.Sprintf("%d %s unanswered: its receive loop is stuck", total, whats), true, ev
	}
	return fmt.Sprintf("it answered %d of %d %s but not the last: its receive loop stopped", answered, total, whats), true, ev
}

// openWords names the server's requests the client has not answered, for
// the hang's message.
func (t *tracker) openWords() string {
	if len(t.bySeq) == 0 {
		return ""
	}
	seqs := make([]int64, 0, len(t.bySeq))
	for s := range t.bySeq {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	var w []string
	for i, s := range seqs {
		if i == 3 {
			w = append(w, fmt.Sprintf("%d more", len(seqs)-3))
			break
		}
		r := t.bySeq[s]
		w = append(w, fmt.Sprintf("%s (id %s)", r.method, r.id))
	}
	if len(seqs) == 1 {
		return "it never answered the server's " + w[0]
	}
	return fmt.Sprintf("it never answered %d server requests (%s)", len(seqs), strings.Join(w, ", "))
}

// openRequests judges the server's requests the client left unanswered.
func (c *clientJudge) openRequests(j *Judger, killed bool) []reports.Finding {
	t := &j.tr
	if len(t.bySeq) == 0 || killed {
		return nil
	}
	pc := &j.pc
	lossEv, words, lost := c.loss(pc)
	seqs := make([]int64, 0, len(t.bySeq))
	for s := range t.bySeq {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	var outs []openOutcome
	for _, s := range seqs {
		r := t.bySeq[s]
		r.fwd.Excerpt = fmt.Sprintf("forwarded the frame of seq %d", r.recv.Seq)
		what := fmt.Sprintf("the server's %s (id %s)", r.method, r.id)
		if r.by != "" {
			what = fmt.Sprintf("the %s (id %s) that fault %s injected", r.method, r.id, r.by)
		}
		hc, gone := pc.halfClose, c.serverLost
		switch {
		case !lost:
			// The client neither exited nor was killed: the transcript ended
			// early, which hang has noted.
		case hc != nil && hc.Seq < lossEv.Seq:
			j.notes.add(fmt.Sprintf("%s was unanswered when the client ended, but mcpchaos had closed its output (%s): the answer could not be read", what, hc.Excerpt))
		case gone != nil && gone.Seq < lossEv.Seq:
			j.notes.add(fmt.Sprintf("%s was unanswered when the client ended, after the server had gone (%s): nobody was left to answer", what, gone.Excerpt))
		case t.unclassifiedOut > r.fwd.Seq:
			j.notes.add(fmt.Sprintf("%s was unanswered, but the client wrote a line too long to classify after it: it may have been the answer", what))
		default:
			outs = append(outs, openOutcome{r: r, rule: reports.RuleLostResponse, variant: words,
				ev: []reports.Evidence{r.recv, r.fwd, lossEv}})
		}
	}
	return t.openFindings(j, outs)
}

// loss is when the client could no longer answer: it closed its output to
// the server or exited, whichever the transcript records first (the runner's
// exit and the relay's end of input are merged in time order).
func (c *clientJudge) loss(pc *processFacts) (ev reports.Evidence, words string, ok bool) {
	switch {
	case pc.stdoutEOF != nil && (pc.exit == nil || pc.stdoutEOF.Seq < pc.exit.Seq):
		words = "client closed its output to the server"
		if pc.exit != nil {
			words += " and " + pc.exitWords()
		}
		return *pc.stdoutEOF, words, true
	case pc.exit != nil:
		return *pc.exit, "client " + pc.exitWords(), true
	}
	return reports.Evidence{}, "", false
}

// exitFindings judges how the client exited, when its stderr showed no
// crash signature.
func (c *clientJudge) exitFindings(j *Judger) []reports.Finding {
	pc := &j.pc
	x := pc.exit
	if x == nil {
		return nil
	}
	hc, sig, gone := pc.halfClose, pc.ourSignal, c.serverLost
	switch {
	case pc.exitSig != "":
		switch {
		case pc.exitByUs || pc.sent[pc.exitSig]:
		case pc.exitSig == "SIGPIPE" && hc != nil && hc.Seq < x.Seq:
			j.notes.add(fmt.Sprintf("the client died of SIGPIPE after mcpchaos closed its output (%s): the fault's doing", hc.Excerpt))
		case pc.exitSig == "SIGPIPE" && gone != nil && gone.Seq < x.Seq:
			j.notes.add(fmt.Sprintf("the client died of SIGPIPE after the server had gone (%s): a write to the closed transport", gone.Excerpt))
		default:
			f := reports.NewFinding(reports.RuleClientFailed, fmt.Sprintf("the client was killed by %s, a signal mcpchaos did not send, with no crash signature on stderr", pc.exitSig), []reports.Evidence{*x})
			f.Signature = "signal:" + pc.exitSig
			return []reports.Finding{f}
		}
	case pc.exitCode != nil && *pc.exitCode != 0:
		code := *pc.exitCode
		switch {
		case sig != nil && sig.Seq < x.Seq:
			// The status reports our signal: the hang is the finding.
		case c.expect == expectFailure:
			// It failed, as it must when a call became impossible.
		case c.expect != expectSuccess:
			j.unknown.add(fmt.Sprintf("the session does not say what the client must do (expect %q, not %q or %q): its exit status %d was not judged", c.expect, expectSuccess, expectFailure, code))
		case hc != nil && hc.Seq < x.Seq:
			j.notes.add(fmt.Sprintf("the client exited with status %d after mcpchaos closed its output (%s): a failed write is a fair reason to fail", code, hc.Excerpt))
		case gone != nil && gone.Seq < x.Seq:
			j.notes.add(fmt.Sprintf("the client exited with status %d after the server had gone (%s): the server's failure, not judged", code, gone.Excerpt))
		default:
			f := reports.NewFinding(reports.RuleClientFailed, fmt.Sprintf("the client failed although every call stayed answerable: it exited with status %d, with no crash signature on stderr", code), []reports.Evidence{*x})
			f.Signature = fmt.Sprintf("exit:%d", code)
			return []reports.Finding{f}
		}
	}
	return nil
}

// callFailure reports whether the crash hit h is an error by which a
// client's SDK tells the program that a call failed: the MCP SDK's own
// error (the Python SDK's MCPError, McpError before 2.0; the TypeScript
// SDK's McpError, "Connection closed", and the errors of its HTTP
// transports, which releases before 1.17 throw as plain Errors: "Error
// POSTing to endpoint (HTTP 503)"), or a network error of the HTTP library
// under it (httpx's ReadError for a reset connection, RemoteProtocolError
// for a cut stream, HTTPStatusError for a 503; Node fetch's "TypeError:
// fetch failed"). A script that does not catch it prints its traceback and
// exits non-zero, which is how it reports the failure. The SDK's internals
// failing (anyio's ClosedResourceError on its own closed stream, a
// RuntimeError, a TypeError the engine raised inside the SDK, a panic) are
// none of these.
func callFailure(h crashHit) bool {
	switch h.sig {
	case "node:McpError", "node:StreamableHTTPError", "node:SseError":
		return true
	case "node:TypeError":
		// Node's fetch (undici) names every network failure so, the
		// reset or the closed socket in its cause.
		return h.text == "TypeError: fetch failed"
	}
	if class, ok := strings.CutPrefix(h.sig, "node:"); ok {
		return nodeSDKError(class, h)
	}
	if !strings.HasPrefix(h.sig, "python:") {
		return false
	}
	class, _, _ := strings.Cut(h.text, ":")
	module, name := "", class
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		module, name = class[:i], class[i+1:]
	}
	root, _, _ := strings.Cut(module, ".")
	switch root {
	case "mcp":
		return name == "MCPError" || name == "McpError"
	case "httpx", "httpx2", "httpcore", "httpcore2":
		return httpFailures[name]
	case "aiohttp":
		return aiohttpFailures[name]
	case "":
		return strings.HasPrefix(name, "Connection") && strings.HasSuffix(name, "Error")
	}
	return false
}

// nodeSDKError reports whether a Node.js error of class was made by the MCP
// SDK's client to fail a call: Node prints where an uncaught error was made
// above its source line, and an error the SDK's client or shared protocol
// code made on purpose is its word to the program. An engine's own error
// (a TypeError from reading a property of undefined) made there is the
// SDK's insides failing, as is any error made elsewhere. The SDK's own
// messages are known too, for a program that bundles the SDK and so hides
// where the error was made.
func nodeSDKError(class string, h crashHit) bool {
	if engineErrors[class] || strings.HasPrefix(class, "unhandled-") {
		return false
	}
	if sdkClientSite(h.site) {
		return true
	}
	_, msg, _ := strings.Cut(h.text, ": ")
	for _, p := range sdkCallFailures {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// sdkClientSite reports whether Node's location line of an error names the
// client or shared code of the TypeScript MCP SDK, installed by npm, pnpm
// or yarn (.../node_modules/@modelcontextprotocol/sdk/dist/esm/client/...),
// or its 2.x packages (@modelcontextprotocol/client, .../core).
func sdkClientSite(site string) bool {
	if _, rest, ok := strings.Cut(site, "/@modelcontextprotocol/sdk/dist/"); ok {
		return strings.Contains(rest, "/client/") || strings.Contains(rest, "/shared/")
	}
	return strings.Contains(site, "/@modelcontextprotocol/client/") || strings.Contains(site, "/@modelcontextprotocol/core/")
}

var (
	// engineErrors are the classes JavaScript engines raise themselves.
	engineErrors = map[string]bool{"TypeError": true, "RangeError": true, "ReferenceError": true,
		"SyntaxError": true, "EvalError": true, "URIError": true, "InternalError": true}
	// sdkCallFailures begin the messages of the errors by which the
	// TypeScript SDK's client transports fail a call, across releases.
	sdkCallFailures = []string{"Error POSTing to endpoint", "Failed to open SSE stream", "Streamable HTTP error", "SSE error", "MCP error "}

	httpFailures = map[string]bool{
		"ReadError": true, "WriteError": true, "ConnectError": true, "RemoteProtocolError": true,
		"NetworkError": true, "ReadTimeout": true, "ConnectTimeout": true, "HTTPStatusError": true,
	}
	aiohttpFailures = map[string]bool{
		"ClientConnectionError": true, "ServerDisconnectedError": true, "ClientOSError": true,
		"ClientPayloadError": true, "ClientResponseError": true,
	}
)

// failedOnCallError says why the crash signature h is the client program
// failing fairly rather than crashing, or "" when it is not: h is its SDK's
// word that a call failed (callFailure), the program then exited non-zero on its own,
// and failing was right, because the scenario expects it or the server had
// gone first. Anything else on its stderr (a ClosedResourceError of the
// transport, a panic) keeps its own signature and is still a crash.
func (c *clientJudge) failedOnCallError(pc *processFacts, h crashHit) string {
	x := pc.exit
	if !callFailure(h) || x == nil || pc.exitCode == nil || *pc.exitCode == 0 || len(c.sigs) > 0 {
		return ""
	}
	if s := pc.ourSignal; s != nil && s.Seq < x.Seq {
		return ""
	}
	switch {
	case c.expect == expectFailure:
		return "the failure the scenario expects"
	case c.serverLost != nil && c.serverLost.Seq < x.Seq:
		return "a fair failure, as the server had gone (" + c.serverLost.Excerpt + ")"
	}
	return ""
}

// exitedClean says the client program exited 0 on its own, no signal of
// the runner's before. Whatever its stderr holds it printed before: its
// stderr is read apart from its exit, and may be recorded after it.
func (c *clientJudge) exitedClean(pc *processFacts) bool {
	return pc.exit != nil && pc.exitCode != nil && *pc.exitCode == 0 && len(c.sigs) == 0
}
