package judge

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Defaults for a session event that does not say (a transcript of mcpchaos
// wrap, which has no deadline of its own): the deadline of mcpchaos test,
// the cap on how long progress keeps a request alive, and the grace of the
// stdio shutdown ladder.
const (
	DefaultDeadline    = 5 * time.Second
	DefaultMaxDeadline = 60 * time.Second
	DefaultGrace       = 3 * time.Second
)

// Verdict is what the judge concludes about one session: the findings; what
// it could not judge at all (the record is cut short or says too little: a
// session with no findings but such a reason did not pass, it could not
// fail); and notes on what it did not hold against the peer because a fault
// explains it (an answer that could not be read after a half-close, a
// failed write after one). Notes do not make a session indeterminate: the
// rest of it was judged.
type Verdict struct {
	Findings      []reports.Finding
	Indeterminate []string
	Notes         []string
}

// Session judges the transcript of one session.
func Session(events []wire.Event) Verdict {
	j := New()
	for i := range events {
		j.add(&events[i])
	}
	return j.Verdict()
}

// Findings returns the findings of one session's transcript: the same events
// always give the same findings in the same order.
func Findings(events []wire.Event) []reports.Finding {
	return Session(events).Findings
}

// peer is one side of a session seen as the thing under test. The checks are
// written against a peer, not against "the server", so that the same checks
// can judge a client (requests travel s2c to it, its answers c2s).
type peer struct {
	name string
	// in is the direction requests to the peer travel; out the direction
	// the peer writes in.
	in, out string
	// inPipe and outPipe are the pipes the peer reads and writes.
	inPipe, outPipe string
	// process is set when the process events (exit, signals, stderr) are
	// this peer's: the spawned process is the one under test.
	process bool
}

var serverPeer = peer{name: "server", in: "c2s", out: "s2c",
	inPipe: wire.PipeServerInput, outPipe: wire.PipeServerOutput, process: true}

// clientPeer is the client as the peer under test (role "client"): the
// request, answer and protocol checks run against it unchanged; its process
// is not the spawned one, but the client program the events with peer
// "client" are about (see client.go).
var clientPeer = peer{name: "client", in: "s2c", out: "c2s",
	inPipe: wire.PipeClientOutput, outPipe: wire.PipeClientInput}

// Judger judges a transcript one event at a time, for transcripts too long
// to hold: its memory is bounded by the requests open at once, plus the
// small excerpts that evidence keeps. Add every event in order, then call
// Verdict once.
type Judger struct {
	p        peer
	disabled string // why no check runs
	// cl is set when the client program is under test (role "client").
	cl *clientJudge
	// judged is set once an event other than the session event and the
	// client program's was judged: the peer under test is fixed then.
	judged bool
	// early holds the client program's events that came before the session
	// event (the test-client runner merges them by time, and the client
	// starts before the relay it spawns), until the session says whether
	// the client is under test.
	early     []wire.Event
	earlyMore int

	// session facts
	seenAny, haveSession bool
	// http marks a session relayed over HTTP (mcpchaos proxy, test --url):
	// the server has no stdin, and SIGTERM is how it is asked to stop.
	http                bool
	scenario, repro     string
	seed                uint64
	deadlineUS, graceUS int64
	// maxDeadlineUS caps how far progress pushes a deadline back.
	maxDeadlineUS int64
	// hangAfterUS is a client program's hang horizon (0: its deadline, as
	// transcripts from before the horizon have it).
	hangAfterUS int64

	lastT int64
	end   *reports.Evidence // the session-end event
	// lastAnswer is the last response or error the peer wrote.
	lastAnswer *reports.Evidence
	// faults are the session's fault specs; fired says one of them fired.
	faults []string
	fired  bool
	// skipped is the first firing a fault skipped, with why: when no fault
	// fired, it is the reason the scenario tested nothing.
	skipped string
	// landing counts, per fault label, its firings and those of them that
	// did not land (wire.NotLanded), in the order the faults first missed.
	landing landings
	// notes are what a fault explains; unknown is what made the session
	// impossible to judge (see Verdict).
	notes, unknown notes

	// unreachable counts the requests the proxy answered 502 because the
	// upstream could not be reached, the first and last at unreachableT.
	unreachable                    int
	unreachableFrom, unreachableTo int64

	tr tracker
	pr protocolChecks
	pc processFacts
	st stalls
	cr crashes
	hc httpCrashes
	se sessionEnds
	ct cutTracker
	gs getStreams
	sf surfaceChecks
	// checks are the Checkers' (checker.go).
	checks []running

	done    bool
	verdict Verdict
}

// New returns a Judger of the peer under test that the session event
// names: the client program for role "client" (mcpchaos test-client), the
// server for roles "server" and "" (both peers real, as under mcpchaos
// wrap), and for a transcript without a session event.
func New() *Judger {
	return newJudger(serverPeer)
}

func newJudger(p peer) *Judger {
	j := &Judger{p: p, deadlineUS: DefaultDeadline.Microseconds(), graceUS: DefaultGrace.Microseconds(),
		maxDeadlineUS: DefaultMaxDeadline.Microseconds()}
	j.tr.init()
	j.pr.init()
	j.sf.init()
	j.cr.init(j)
	j.checks = startChecks()
	return j
}

// Add judges the next event of the transcript. Events after Verdict was
// called are ignored.
func (j *Judger) Add(e wire.Event) { j.add(&e) }

func (j *Judger) add(e *wire.Event) {
	if j.done {
		return
	}
	if e.Type == wire.EventCPUShare {
		// Not something the peer did: it neither ends nor lengthens the
		// record, it only says how fast the peer's deadlines ran.
		j.st.share(e.T, float64(e.CPUShare)/1000)
		return
	}
	j.lastT = max(j.lastT, e.T)
	if e.Peer != "" {
		j.peerEvent(e)
		return
	}
	if !j.seenAny {
		j.seenAny = true
		if e.Type != wire.EventSession {
			j.notes.add("the transcript does not start with a session event: judged with the default deadline and grace, without scenario, seed or repro")
		}
	}
	switch e.Type {
	case wire.EventSession:
		j.session(e)
		return
	case wire.EventSessionEnd:
		ev := evidenceOf(e)
		j.end = &ev
		return
	}
	j.judged = true
	if j.disabled != "" {
		return
	}
	j.checkEvent(e)
	cl := j.cl
	switch e.Type {
	case wire.EventReceived:
		if e.Dir == j.p.in {
			j.hc.posted(e)
		}
		if e.Dir == "c2s" && j.http {
			j.se.message(e)
		}
		j.ct.received(e)
		j.received(e)
		if e.Dir == j.p.in && e.Kind == "request" && e.Exchange != 0 {
			if cut := j.ct.inFlightAt(e.Exchange); cut != nil {
				j.tr.inFlightAtCut(e.Seq, cut)
			}
		}
		if cl != nil {
			cl.received(e)
		}
	case wire.EventForwarded:
		if e.Dir == j.p.out {
			j.tr.answerSettled(e.Of, true)
			j.tr.asked.settled(e, true)
		}
		j.tr.forwarded(j, e)
		if cl != nil {
			cl.forwarded(e)
		}
	case wire.EventDropped:
		if e.Dir == j.p.out {
			j.tr.asked.settled(e, false)
			if lost := j.tr.answerSettled(e.Of, false); lost != "" && j.p.name == "server" && strings.Contains(e.Detail, "by fault ") {
				j.notes.add(fmt.Sprintf("the answer to %s never reached the client (%s), and no resumption could bring it back: "+
					"the server sent it with no event id (resumability is optional; MCP 2025-11-25, Basic › Transports › Streamable HTTP › Resumability and Redelivery)", lost, e.Detail))
			}
		}
		j.tr.dropped(e)
		if cl != nil {
			cl.dropped(e)
		}
	case wire.EventInjected:
		if e.Dir == j.p.in {
			j.hc.posted(e)
			j.tr.injected(j, e)
			if e.Kind == "request" && j.p.name == "server" {
				// A fault's tasks/cancel: its answer is judged as the
				// client's would be.
				j.sf.request(e, j.sessionOf(e))
			}
			if cl != nil {
				cl.injected(e)
			}
		} else if cl != nil {
			cl.cancelledForIt(e)
		}
	case wire.EventProbe:
		if e.Dir == j.p.in {
			p := j.tr.probe(j, e)
			if cl != nil {
				cl.probe(p)
			}
		}
	case wire.EventFault:
		j.fault(e)
	case wire.EventHTTP:
		j.gs.http(e)
		if cut, exchange := j.ct.http(e); cut != nil {
			j.tr.cutExchange(cut, exchange)
			j.sf.cut(cut)
			if cut.legacy && j.cl != nil && j.cl.expect == expectSuccess {
				// A scenario that cuts the GET stream to leave the calls
				// answerable on streamable HTTP cuts, on the legacy
				// transport, the stream every answer travels on.
				j.cl.expect = expectFailure
				j.notes.add(fmt.Sprintf("fault %s cut the legacy transport's session stream, which carries every answer: the client's calls became impossible, so it may fail them (it must not hang or crash)", cut.fault))
			}
		}
		if e.Standalone && e.HTTP != "" {
			j.tr.getGap = nil // the client opened another GET stream
		}
		if p, ok := j.ct.accepted(e.Exchange); ok && e.Status >= 200 && e.Status < 300 && !e.ByUs && j.p.name == "server" {
			j.tr.acceptedAfterCut(e.Exchange, e.Status, p, evidenceOf(e))
		}
		// The client's half of the session checks (a new session after a
		// 404) reads the same exchanges as the server's.
		if by := j.se.http(e); by != "" && j.cl == nil {
			// The server ended the session somewhere between the
			// fault's DELETE and its answer: what was sent on
			// meanwhile raced the end, as what was in flight at the
			// fault did.
			j.tr.sessionEnded(j, &wire.Event{Seq: e.Seq, T: e.T, Fault: by})
		}
		// An error status with Of names the request of its exchange that
		// it answered (mcpchaos proxy).
		if e.Status >= 400 && j.p.name == "server" {
			var request string
			if e.Of != 0 {
				request = j.tr.rejected(e.Of)
				if request == "" {
					// The client's answer to one of the server's
					// requests, refused: the server never got it.
					j.tr.asked.answerRefused(e)
				}
			}
			if e.Status >= 500 && e.Fault == "" && (e.Raw != "" || e.RawBase64 != "") {
				j.hc.body(e)
			}
			if e.Exchange != 0 {
				j.tr.errorStatus(e.Exchange, e.Status, request)
			}
		}
	case wire.EventPipeClosed:
		j.pc.pipeClosed(j, e)
		if cl != nil {
			cl.serverEvent(j, e)
		}
	case wire.EventError:
		if strings.HasPrefix(e.Detail, upstreamUnreachable) {
			if j.unreachable == 0 {
				j.unreachableFrom = e.T
			}
			j.unreachable++
			j.unreachableTo = e.T
		}
	case wire.EventSignal:
		if j.p.process {
			j.pc.signal(e)
		}
	case wire.EventProcessExited:
		switch {
		case cl != nil:
			cl.serverEvent(j, e)
		case j.p.process && j.pc.exit == nil:
			j.pc.exited(e)
		}
	case wire.EventStderr:
		if j.p.process {
			j.cr.stderr(e)
		}
	}
}

// peerEvent handles an event about a named peer's process: the client
// program's, when it is under test. Such events are never the server's.
func (j *Judger) peerEvent(e *wire.Event) {
	if e.Peer != "client" {
		return
	}
	switch {
	case j.cl != nil:
		if j.disabled == "" {
			j.clientEvent(e)
		}
	case j.haveSession:
		// The client is not under test.
	case len(j.early) < maxEarly:
		j.early = append(j.early, *e)
	default:
		j.earlyMore++
	}
}

func (j *Judger) session(e *wire.Event) {
	if j.haveSession {
		return // one transcript is one session; a second header changes nothing
	}
	j.haveSession = true
	j.scenario, j.repro, j.faults = e.Scenario, e.Repro, e.Faults
	j.http = e.URL != ""
	if e.Seed != nil {
		j.seed = *e.Seed
	}
	if e.DeadlineMS > 0 {
		j.deadlineUS = e.DeadlineMS * 1000
	}
	if e.GraceMS > 0 {
		j.graceUS = e.GraceMS * 1000
	}
	if e.MaxDeadlineMS > 0 {
		j.maxDeadlineUS = e.MaxDeadlineMS * 1000
	}
	if e.HangAfterMS > 0 {
		j.hangAfterUS = e.HangAfterMS * 1000
	}
	early := j.early
	j.early = nil
	if e.Role != "client" {
		return
	}
	if j.judged {
		j.disabled = "the session event (role client) came after the traffic it describes: no check ran"
		return
	}
	j.p = clientPeer
	j.cl = newClientJudge(e.Expect)
	for i := range early {
		j.clientEvent(&early[i])
	}
	if j.earlyMore > 0 {
		j.notes.add(fmt.Sprintf("%d events about the client program before the session event were not judged", j.earlyMore))
	}
}

func (j *Judger) received(e *wire.Event) {
	switch e.Dir {
	case j.p.in:
		j.tr.receivedIn(e)
		j.tr.asked.answer(e)
		if e.Kind == "request" && j.p.name == "server" {
			j.sf.request(e, j.sessionOf(e))
		}
	case j.p.out:
		if isPiece(e) {
			// A line over the relay's cap is recorded in unclassified pieces:
			// it may have been an answer, which no check can tell.
			j.tr.unclassifiedOut = e.Seq
			return
		}
		if j.tr.earlyInjectedAnswer(e) {
			return
		}
		if e.Kind == "invalid" && e.Problem == noIDProblem && j.tr.errorBody(e.Exchange) {
			// The body of an HTTP error status: "a JSON-RPC error response
			// that has no id" is what the specification lets it be
			// (Streamable HTTP, Sending Messages to the Server).
			return
		}
		if e.Kind == "notification" && e.Method == "notifications/progress" {
			j.tr.progress(e)
		}
		if e.Kind == "notification" && e.Exchange != 0 {
			j.tr.streamNote(e)
		}
		if e.Kind == "response" || e.Kind == "error" {
			j.lastAnswer = &reports.Evidence{Seq: e.Seq, TUS: e.T, Type: e.Type, Dir: e.Dir}
		}
		j.tr.asked.received(e)
		method := j.tr.answer(j, e)
		j.pr.check(j, e, method)
		if j.p.name == "server" {
			j.sf.out(j, e)
		}
	}
}

func (j *Judger) fault(e *wire.Event) {
	if strings.HasPrefix(e.Detail, wire.NotLanded) {
		// A firing that did not land: its decision was recorded before.
		j.landing.missed(e)
		return
	}
	if e.Spec != "" && !strings.HasPrefix(e.Detail, "skipped") {
		// The event of a firing's decision (a fault's later events, a
		// stall released or a linger ended, carry no spec).
		j.landing.fired(e.Fault)
	}
	j.gs.fault(e)
	// A skipped firing (a progress burst with no token to use) did not
	// create the scenario's moment.
	if !strings.HasPrefix(e.Detail, "skipped") {
		j.fired = true
	} else if j.skipped == "" {
		j.skipped = e.Fault + " " + e.Detail
	}
	// A window during which a fault kept the peer from answering: a stall
	// not reading its output, a SIGSTOP freezing it, a stderr flood it is
	// blocked writing, a throttle pacing a frame while nothing is read. Its
	// silence inside the window is the fault's doing.
	if holdsOutput[e.Action] && e.Dir == j.p.out && (e.Forever || e.UntilUS > 0) {
		end := e.UntilUS
		if e.Forever {
			end = never
		}
		j.st.add(e.T, end)
		j.pc.stallEvidence = addEvidence(j.pc.stallEvidence, evidenceOf(e))
	}
	if e.Action == "linger" && strings.HasPrefix(e.Detail, "ignored") && j.cl != nil {
		ev := evidenceOf(e)
		if j.cl.lingered == nil {
			j.cl.lingered = &ev
		}
		// The client signalled the server end it had started (mcpchaos
		// wrap): the shutdown ladder's escalation, which takes the time
		// the ladder gives each step.
		if strings.Contains(e.Detail, "mcpchaos got SIG") && j.cl.escalated == nil {
			j.cl.escalated = &ev
		}
	}
	if e.ID != "" && e.Of != 0 && e.Dir == j.p.in {
		// An id fault sends the request on under another id (id-type,
		// id-collision); two requests under one id are answered oldest
		// first (see tracker.answer), so the second answer is owed.
		j.tr.rewritten(e.Of, e.ID, e.Action == "id-collision")
	}
	if e.Action == "signal" || e.Action == "kill" {
		// The next signal event is this fault's doing, not the ladder's.
		j.pc.faultSignal = true
	}
	if e.Action == "end-session" && !strings.HasPrefix(e.Detail, "skipped") && j.cl == nil {
		j.tr.sessionEnded(j, e)
	}
}

// landings counts the firings of each fault and those that did not land.
type landings struct {
	firings map[string]int
	misses  map[string]int
	// first is each missing fault's first miss, in the order they came.
	first []*wire.Event
}

func (l *landings) fired(label string) {
	if l.firings == nil {
		l.firings = map[string]int{}
	}
	l.firings[label]++
}

func (l *landings) missed(e *wire.Event) {
	if l.misses == nil {
		l.misses = map[string]int{}
	}
	if l.misses[e.Fault] == 0 {
		l.first = append(l.first, e)
	}
	l.misses[e.Fault]++
}

// notLanded says, for each fault that fired and never landed (every
// firing of it missed), that the scenario tested nothing of it: the moment
// it fired on was gone by the time its effect reached the peer.
func (l *landings) notLanded() []string {
	var out []string
	for _, e := range l.first {
		if l.firings[e.Fault] <= l.misses[e.Fault] {
			why := strings.TrimPrefix(strings.TrimPrefix(e.Detail, wire.NotLanded), ": ")
			out = append(out, "the fault fired but did not land: "+e.Fault+": "+why)
		}
	}
	return out
}

// exitedOnItsOwn notes an HTTP server that exited cleanly before it was
// asked to stop: no rule forbids it (a single-client server may end with
// its client, as server-everything 0.6.2's legacy example does when its
// stream closes), but every request after it found nothing listening.
func (j *Judger) exitedOnItsOwn() {
	pc := &j.pc
	if !j.http || !j.p.process || pc.exit == nil || pc.exitBadlyOrSignalled() || pc.ourSignal != nil && pc.ourSignal.Seq < pc.exit.Seq {
		return
	}
	j.notes.add(fmt.Sprintf("the server exited on its own (%s) at %s, before mcpchaos asked it to stop: the requests sent after found nothing listening", pc.exitWords(), words.Duration(pc.exit.TUS)))
}

// upstreamUnreachable starts the error event of a request the proxy could
// not relay (httpchaos badGateway).
const upstreamUnreachable = "the upstream could not be reached"

// holdsOutput names the faults whose events can carry a window (UntilUS or
// Forever) during which the peer's output could not be read or written.
var holdsOutput = map[string]bool{"stall": true, "signal": true, "stderr-flood": true, "throttle": true}

// isPiece reports whether e is a piece of a line longer than the relay's
// cap, which the relay records unclassified.
func isPiece(e *wire.Event) bool {
	return e.Kind == "invalid" && strings.HasPrefix(e.Problem, "line longer than")
}

// endT is when the session ended: its session-end event, or, when the
// recorder died before writing one, the last event there is.
func (j *Judger) endT() int64 {
	if j.end != nil {
		return j.end.TUS
	}
	return j.lastT
}

// Verdict finishes judging and returns the findings, sorted by kind (in the
// order of DESIGN.md's verdict table) and then by their first evidence.
func (j *Judger) Verdict() Verdict {
	if j.done {
		return j.verdict
	}
	j.done = true
	if j.disabled != "" {
		j.unknown.add(j.disabled)
		j.verdict = Verdict{Indeterminate: j.unknown.list(), Notes: j.notes.list()}
		return j.verdict
	}
	// A client that SIGKILLs a lingering server (mcpchaos wrap) escalates
	// as it should; the transcript then stops without a session end.
	if len(j.faults) > 0 && !j.fired {
		if j.skipped != "" {
			j.unknown.add("no fault fired: " + j.skipped)
		} else {
			j.unknown.add("no fault fired: the moment this scenario waits for never came (" + strings.Join(j.faults, " ") + ")")
		}
	}
	for _, why := range j.landing.notLanded() {
		j.unknown.add(why)
	}
	if why := j.gs.indeterminate(); why != "" {
		j.unknown.add(why)
	}
	killedWhileLingering := j.cl != nil && j.cl.lingered != nil
	if j.end == nil && j.seenAny && !killedWhileLingering {
		j.unknown.add("the transcript has no session-end event (did mcpchaos die?): judged what it holds")
	}
	j.exitedOnItsOwn()
	if j.unreachable > 0 {
		// The server was down or restarting (a proxy in front of a server
		// that is restarted): what went unanswered meanwhile is not held
		// against it, but a report that ran through it must say so.
		why := "was the server down or restarting?"
		if s := j.pc.ourSignal; s != nil && s.TUS <= j.unreachableFrom {
			why = "after mcpchaos signalled the server: " + s.Excerpt
		}
		j.notes.add(fmt.Sprintf("the upstream could not be reached for %d %s, between %s and %s: mcpchaos answered %s 502 (%s)",
			j.unreachable, words.Plural(j.unreachable, "request", "requests"), words.Duration(j.unreachableFrom), words.Duration(j.unreachableTo), words.Plural(j.unreachable, "it", "them"), why))
	}
	var fs []reports.Finding
	if j.cl != nil {
		fs = j.clientFindings()
		fs = append(fs, j.gs.findings()...)
	} else {
		fs = append(fs, j.tr.judgeOpen(j)...)
		fs = append(fs, j.tr.answerFindings(j)...)
		fs = append(fs, j.cr.findings(j)...)
		fs = append(fs, j.hc.findings()...)
		fs = append(fs, j.se.findings()...)
		fs = append(fs, j.se.fg.findings(j)...)
		fs = append(fs, j.pc.zombie(j)...)
		fs = append(fs, j.pc.httpZombie(j)...)
		fs = append(fs, j.pr.findings(j)...)
		fs = append(fs, j.sf.findings(j)...)
	}
	fs = append(fs, j.checkFindings()...)
	for i := range fs {
		fs[i].Scenario, fs[i].Seed, fs[i].Repro = j.scenario, j.seed, j.repro
	}
	sortFindings(fs)
	j.verdict = Verdict{Findings: fs, Indeterminate: j.unknown.list(), Notes: j.notes.list()}
	return j.verdict
}

// Findings is Verdict().Findings.
func (j *Judger) Findings() []reports.Finding { return j.Verdict().Findings }

func sortFindings(fs []reports.Finding) {
	first := func(f *reports.Finding) int64 {
		if len(f.Evidence) == 0 {
			return 0
		}
		return f.Evidence[0].Seq
	}
	slices.SortStableFunc(fs, func(a, b reports.Finding) int {
		if c := cmp.Compare(reports.KindRank(a.Kind), reports.KindRank(b.Kind)); c != 0 {
			return c
		}
		if c := cmp.Compare(first(&a), first(&b)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Signature, b.Signature); c != 0 {
			return c
		}
		return cmp.Compare(a.Message, b.Message)
	})
}

// notes collects the indeterminate outcomes of a session, each once.
type notes struct {
	items []string
	seen  map[string]bool
	extra int
}

// maxNotes bounds the notes of one session; the rest are counted.
const maxNotes = 20

func (n *notes) add(s string) {
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	if n.seen[s] {
		return
	}
	if len(n.items) >= maxNotes {
		n.extra++
		return
	}
	n.seen[s] = true
	n.items = append(n.items, s)
}

func (n *notes) list() []string {
	out := slices.Clone(n.items)
	if n.extra > 0 {
		out = append(out, "and "+itoa(n.extra)+" more indeterminate outcomes (see the transcript)")
	}
	return out
}
