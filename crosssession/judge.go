package crosssession

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Judge reads the events of a run's sessions as they are recorded, each
// session's in its order (the sessions' records may interleave in any way:
// live, they are recorded at once; offline, one transcript after another),
// and once given the sessions' own verdicts says what crossed between them.
// Add may be called from several goroutines at once.
type Judge struct {
	mu       sync.Mutex
	sessions []*session
}

// New returns a Judge of a run of n sessions.
func New(n int) *Judge {
	j := &Judge{sessions: make([]*session, n)}
	for i := range j.sessions {
		j.sessions[i] = &session{n: i + 1, requests: map[string]*request{}, byExchange: map[int64]*request{}}
	}
	return j
}

// session is what the check across sessions keeps of one session's record:
// its client's requests, the messages it received that carry a marker, and
// what its faults did.
type session struct {
	n        int
	marker   string
	scenario string
	repro    string
	seed     uint64
	// faulted says the session's plan had faults; fired is the first of
	// them that fired (and did not only skip).
	faulted bool
	fired   *reports.Evidence
	firedBy string
	// wholeServer says a fault of its plan struck the server itself (a
	// signal to its process), which no session is spared.
	wholeServer bool
	// sessionID is the Mcp-Session-Id the server issued the session, as
	// its client's requests carry it, and where it was first seen.
	sessionID   string
	sessionIDEv reports.Evidence
	// opening is the client's opening request (initialize, or
	// server/discover); opened says a result answered it, and refusal is
	// how it was refused otherwise (an HTTP status, an error).
	opening *request
	opened  bool
	refusal string
	// sessionless holds the exchanges whose request line carried no
	// Mcp-Session-Id, until their message is read.
	sessionless map[int64]bool
	// requests are the client's, by id; byExchange by the HTTP exchange
	// that carried them.
	requests   map[string]*request
	byExchange map[int64]*request
	// deleted is when the client ended its own session (a DELETE it sent
	// or a fault of its plan made), after which a 404 is its due.
	deleted bool
	// marked are the messages received from the server that carry some
	// session's marker, kept until the other sessions' markers are known.
	marked []markedMessage
	// subscribed are the resources the client subscribed to; updates are
	// the first resources/updated notifications it got, by resource.
	subscribed []string
	updates    map[string]reports.Evidence
	// level is the log level the server answered the session's
	// logging/setLevel for (an index of logLevels), levelSet that answer
	// (nil: none yet); below is the first log message after it of a lower
	// level, and belowLevel its level's index.
	level      int
	levelSet   *reports.Evidence
	below      *reports.Evidence
	belowLevel int
}

type request struct {
	id, method, tool string
	// token is the progress token it carried.
	token string
	ev    reports.Evidence
	// marked says the request carried its session's own marker, so that
	// an answer to it should carry that marker rather than another's.
	marked bool
	// status is the HTTP error status that answered it (0: none); result
	// and errored say how a JSON-RPC answer did.
	status          int
	statusEv        *reports.Evidence
	result, errored bool
	answerEv        *reports.Evidence
	// level is the level a logging/setLevel asked for.
	level string
	// sessionless says it carried no Mcp-Session-Id (the stateless
	// revision, or before the handshake gave one): a 404 then says
	// nothing of a session (mcp-go answers an unknown method so).
	sessionless bool
}

type markedMessage struct {
	kind, id, method, token string
	ev                      reports.Evidence
	markers                 map[int]string
}

// Add judges the next event of session k (1 is the first).
func (j *Judge) Add(k int, e wire.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if k < 1 || k > len(j.sessions) {
		return
	}
	j.sessions[k-1].add(&e)
}

func (s *session) add(e *wire.Event) {
	switch e.Type {
	case wire.EventSession:
		s.marker, s.scenario, s.repro, s.faulted = e.Marker, e.Scenario, e.Repro, len(e.Faults) > 0
		if e.Seed != nil {
			s.seed = *e.Seed
		}
	case wire.EventFault:
		s.fault(e)
	case wire.EventHTTP:
		s.http(e)
	case wire.EventReceived:
		if e.Dir == wire.ToServer.String() {
			s.sent(e)
		} else {
			s.received(e)
		}
	}
}

func (s *session) fault(e *wire.Event) {
	if strings.HasPrefix(e.Detail, "skipped") || strings.HasPrefix(e.Detail, wire.NotLanded) || e.Spec == "" {
		return
	}
	if s.fired == nil {
		ev := judge.EvidenceOf(e)
		s.fired, s.firedBy = &ev, e.Fault
	}
	if e.Action == "end-session" {
		s.deleted = true
	}
	if e.Action == "signal" {
		s.wholeServer = true
	}
}

func (s *session) http(e *wire.Event) {
	if strings.HasPrefix(e.HTTP, "DELETE ") {
		s.deleted = true
	}
	if strings.HasPrefix(e.HTTP, "POST ") && e.MCPSession == "" && len(s.sessionless) < maxSessionless {
		if s.sessionless == nil {
			s.sessionless = map[int64]bool{}
		}
		s.sessionless[e.Exchange] = true
	}
	if s.sessionID == "" && e.MCPSession != "" && e.HTTP != "" && !strings.Contains(e.HTTP, "(") {
		// The id the client's own first request carried: the server's.
		s.sessionID, s.sessionIDEv = e.MCPSession, judge.EvidenceOf(e)
	}
	if e.Status < 400 || e.ByUs {
		return
	}
	r := s.byExchange[e.Exchange]
	if r == nil || r.status != 0 {
		return
	}
	r.status = e.Status
	ev := judge.EvidenceOf(e)
	r.statusEv = &ev
	if r == s.opening && !s.opened && s.refusal == "" {
		s.refusal = fmt.Sprintf("HTTP %d", e.Status)
	}
}

// sent notes a request the session's client sent.
func (s *session) sent(e *wire.Event) {
	sessionless := s.sessionless[e.Exchange]
	delete(s.sessionless, e.Exchange)
	if e.Kind != "request" || strings.HasPrefix(e.ID, wire.ProbeIDPrefix) {
		return
	}
	b, _ := e.Bytes()
	r := &request{id: e.ID, method: e.Method, token: e.ProgressToken, ev: judge.EvidenceOf(e),
		marked: s.marker != "" && bytes.Contains(b, []byte(s.marker)), sessionless: sessionless}
	switch e.Method {
	case "tools/call":
		r.tool = param(b, "name")
	case "logging/setLevel":
		r.level = param(b, "level")
	}
	if e.Method == "resources/subscribe" {
		if uri := param(b, "uri"); uri != "" && !slices.Contains(s.subscribed, uri) {
			s.subscribed = append(s.subscribed, uri)
		}
	}
	if _, seen := s.requests[e.ID]; !seen {
		s.requests[e.ID] = r
	}
	if e.Exchange != 0 {
		s.byExchange[e.Exchange] = r
	}
	if opening(e.Method) {
		// The latest attempt: a client of both eras tries server/discover,
		// and on its refusal falls back to initialize.
		s.opening, s.refusal = r, ""
	}
}

// received notes what the server sent the session: the answers to its
// requests, and any message that carries a marker.
func (s *session) received(e *wire.Event) {
	if strings.HasPrefix(e.ID, wire.ProbeIDPrefix) {
		return
	}
	b, _ := e.Bytes()
	if e.Kind == "response" || e.Kind == "error" {
		if r := s.requests[e.ID]; r != nil && !r.result && !r.errored {
			r.result, r.errored = e.Kind == "response", e.Kind == "error"
			ev := judge.EvidenceOf(e)
			r.answerEv = &ev
			if r.method == "logging/setLevel" && e.Kind == "response" {
				if i := slices.Index(logLevels, r.level); i >= 0 {
					s.level, s.levelSet, s.below = i, &ev, nil
				}
			}
			if opening(r.method) && e.Kind == "response" {
				s.opened = true
			} else if r == s.opening && !s.opened && s.refusal == "" {
				s.refusal = "a JSON-RPC error"
			}
		}
	}
	if e.Kind == "notification" && e.Method == "notifications/message" && s.levelSet != nil && s.below == nil {
		if i := slices.Index(logLevels, param(b, "level")); i >= 0 && i < s.level {
			ev := judge.EvidenceOf(e)
			s.below, s.belowLevel = &ev, i
		}
	}
	if e.Kind == "notification" && e.Method == "notifications/resources/updated" {
		if uri := param(b, "uri"); uri != "" && len(s.updates) < maxUpdates {
			if s.updates == nil {
				s.updates = map[string]reports.Evidence{}
			}
			if _, seen := s.updates[uri]; !seen {
				s.updates[uri] = judge.EvidenceOf(e)
			}
		}
	}
	if found := markedSessions(b); found != nil {
		s.marked = append(s.marked, markedMessage{kind: e.Kind, id: e.ID, method: e.Method, token: e.ProgressToken, ev: judge.EvidenceOf(e), markers: found})
	}
}

// opening says a method opens a session: initialize, or server/discover in
// the stateless revision.
func opening(method string) bool { return method == "initialize" || method == "server/discover" }

// maxUpdates bounds the resources a session's updates are kept for.
const maxUpdates = 64

// maxSessionless bounds the request lines awaiting their message.
const maxSessionless = 4096

// param is the string member key of a message's params ("" when absent):
// a tools/call's name, a subscription's or update's uri.
func param(b []byte, key string) string {
	var m struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	var v string
	if json.Unmarshal(b, &m) != nil || json.Unmarshal(m.Params[key], &v) != nil {
		return ""
	}
	return v
}

// Verdict is the run's verdict: the sessions' own findings, merged and each
// naming the sessions it was read from, and what crossed between the
// sessions. perSession holds each session's verdict from package judge,
// the first session's first.
func (j *Judge) Verdict(perSession []judge.Verdict) judge.Verdict {
	j.mu.Lock()
	defer j.mu.Unlock()
	var v judge.Verdict
	robbed := j.robbedOpenings(perSession)
	refused := j.refusedSessions(&v, robbed)
	c := crossing{j: j, refused: refused, robbed: robbed}
	own := c.ownFindings(perSession)
	own = c.leaks(own)
	own = c.updates(own)
	own = c.levels(own)
	own = c.harm(own)
	c.sessionIDs()
	first := j.sessions[0]
	for i := range c.found {
		c.found[i].Scenario, c.found[i].Seed, c.found[i].Repro = first.scenario, first.seed, first.repro
	}
	v.Findings = append(v.Findings, c.found...)
	v.Findings = append(v.Findings, merge(own)...)
	slices.SortStableFunc(v.Findings, func(a, b reports.Finding) int {
		return reports.KindRank(a.Kind) - reports.KindRank(b.Kind)
	})
	v.Notes = append(v.Notes, mergeLines(perSession, refused, func(v judge.Verdict) []string { return v.Notes })...)
	v.Indeterminate = append(v.Indeterminate, mergeLines(perSession, refused, func(v judge.Verdict) []string { return v.Indeterminate })...)
	return v
}

// refusedSessions finds the sessions the server would not open while
// another was open: a server of one client at a time. That is said, and
// the run, which then tested too few sessions side by side, is
// indeterminate; the refused sessions' own records are not judged (their
// refusal is the server's answer to a second client, not a failure of it).
func (j *Judge) refusedSessions(v *judge.Verdict, robbed map[int]bool) map[int]bool {
	var open []int
	for _, s := range j.sessions {
		if s.opened {
			open = append(open, s.n)
		}
	}
	refused := map[int]bool{}
	for _, s := range j.sessions {
		if s.opened || s.opening == nil && len(s.requests) == 0 && len(open) > 0 || robbed[s.n] {
			continue
		}
		refused[s.n] = true
		how := "got no answer to its " + s.openingMethod()
		if s.refusal != "" {
			how = "was refused its " + s.openingMethod() + " with " + s.refusal
		}
		if len(open) > 0 {
			v.Notes = append(v.Notes, fmt.Sprintf("the server served one session at a time: session %d %s while %s was open, so it serves one client at a time (several clients at once, as an IDE and an agent connect, would be refused)",
				s.n, how, sessionsWord(open[:1])))
		} else {
			v.Notes = append(v.Notes, fmt.Sprintf("session %d %s", s.n, how))
		}
	}
	switch {
	case len(open) == 0:
		v.Indeterminate = append(v.Indeterminate, fmt.Sprintf("none of the %d sessions opened, so nothing ran side by side", len(j.sessions)))
	case len(open) == 1 && len(refused) > 0:
		v.Indeterminate = append(v.Indeterminate, fmt.Sprintf("the server would not open %d of the %d sessions beside the first it opened, so nothing could cross between them", len(refused), len(j.sessions)-1))
	}
	return refused
}

// robbedOpenings are the sessions whose opening request got no answer at
// all (no status, no error) while another session's judge found a second
// answer to that id, or one to an id it never sent: the server did not
// refuse the session, it answered it on another's stream (a server of one
// global transport, as the legacy HTTP+SSE examples were). They are judged,
// and the crossing is reported (see crossedAnswers).
func (j *Judge) robbedOpenings(perSession []judge.Verdict) map[int]bool {
	robbed := map[int]bool{}
	for _, s := range j.sessions {
		if s.opened || s.opening == nil || s.refusal != "" || s.opening.status != 0 {
			continue
		}
		for i, v := range perSession {
			if i+1 == s.n {
				continue
			}
			if slices.ContainsFunc(v.Findings, func(f reports.Finding) bool {
				return f.Request != nil && f.Request.ID == s.opening.id && (f.Rule == reports.RuleDuplicateResponse || f.Rule == reports.RuleUnknownResponse)
			}) {
				robbed[s.n] = true
			}
		}
	}
	return robbed
}

func (s *session) openingMethod() string {
	if s.opening == nil {
		return "initialize"
	}
	return s.opening.method
}

// crossing is one verdict's work: the findings across sessions, and which
// sessions are left out.
type crossing struct {
	j       *Judge
	refused map[int]bool
	// robbed are the sessions whose opening answer went to another's
	// stream (robbedOpenings).
	robbed map[int]bool
	found  []reports.Finding
}

// sessionFinding is a finding of one session's judge, with its session.
type sessionFinding struct {
	n int
	f reports.Finding
}

// ownFindings are the sessions' own findings, each marked with its session,
// the refused sessions' left out.
func (c *crossing) ownFindings(perSession []judge.Verdict) []sessionFinding {
	var out []sessionFinding
	for i, v := range perSession {
		n := i + 1
		if c.refused[n] {
			continue
		}
		for _, f := range v.Findings {
			f.Sessions = []int{n}
			f.Evidence = slices.Clone(f.Evidence)
			for k := range f.Evidence {
				f.Evidence[k].Session = n
			}
			out = append(out, sessionFinding{n: n, f: f})
		}
	}
	return out
}

// mergeLines joins the sessions' notes (or reasons for indeterminate): a
// line every judged session has is said once, one that only some have is
// said with the sessions it came from.
func mergeLines(perSession []judge.Verdict, refused map[int]bool, lines func(judge.Verdict) []string) []string {
	var order []string
	from := map[string][]int{}
	judged := 0
	for i, v := range perSession {
		n := i + 1
		if refused[n] {
			continue
		}
		judged++
		for _, l := range lines(v) {
			if from[l] == nil {
				order = append(order, l)
			}
			if !slices.Contains(from[l], n) {
				from[l] = append(from[l], n)
			}
		}
	}
	var out []string
	for _, l := range order {
		if len(from[l]) == judged || judged == 1 {
			out = append(out, l)
			continue
		}
		out = append(out, sessionsWord(from[l])+": "+l)
	}
	return out
}

// merge reports a finding several sessions' judges made alike (the one
// server's crash, seen in every record; the same hang in each) once, naming
// every session it was read from.
func merge(fs []sessionFinding) []reports.Finding {
	var out []reports.Finding
	at := map[string]int{}
	for _, sf := range fs {
		k := sameKey(sf.f)
		if i, ok := at[k]; ok {
			if !slices.Contains(out[i].Sessions, sf.n) {
				out[i].Sessions = append(out[i].Sessions, sf.n)
			}
			continue
		}
		at[k] = len(out)
		out = append(out, sf.f)
	}
	for i := range out {
		if len(out[i].Sessions) > 1 {
			out[i].Message += " (" + sessionsWord(out[i].Sessions) + " alike; the evidence is session " + fmt.Sprint(out[i].Sessions[0]) + "'s)"
		}
	}
	return out
}

// sameKey is what makes two sessions' findings the same: the rule, the
// signature, and the request's method, tool and id (the sessions run one
// workload, so their requests of one id are alike; two hangs of different
// requests stay two findings). Messages differ in the times each session's
// clock gives.
func sameKey(f reports.Finding) string {
	k := f.Rule + "\x00" + f.Kind + "\x00" + f.Signature
	if f.Request != nil {
		k += "\x00" + f.Request.Method + "\x00" + f.Request.Tool + "\x00" + f.Request.ID
	}
	return k
}

func sessionsWord(ns []int) string {
	ns = slices.Clone(ns)
	slices.Sort(ns)
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	if len(ns) == 1 {
		return "session " + parts[0]
	}
	return "sessions " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// sessionIDs judges the session ids one server issued its clients, side by
// side: one a client could guess, or ids numbered one after the other, let
// one user's client reach another's session (session-id-guessable).
func (c *crossing) sessionIDs() {
	var ids []string
	var evs []reports.Evidence
	for _, s := range c.j.sessions {
		if s.sessionID != "" && !slices.Contains(ids, s.sessionID) {
			ev := s.sessionIDEv
			ev.Session = s.n
			ids, evs = append(ids, s.sessionID), append(evs, ev)
		}
	}
	if len(ids) < 2 {
		return
	}
	if f := judge.GuessableSessionIDs(ids, evs); f != nil {
		for _, ev := range f.Evidence {
			f.Sessions = append(f.Sessions, ev.Session)
		}
		c.found = append(c.found, *f)
	}
}
