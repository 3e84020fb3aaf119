package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The session-termination check: once a server has accepted a DELETE of
// its session (2xx), it MUST answer that session's later requests with
// 404 (MCP 2025-11-25, Transports › Streamable HTTP › Session Management).
// A server that serves on keeps a session its client believes gone, and a
// client that waits for the 404 to start a new session never gets it.
// Only a request that began after the DELETE was accepted counts: a call
// in flight when the session ended may be finished (see
// tracker.sessionEnded).

type httpExchange struct {
	method, session string
	// byFault is the fault that sent this request, if one did; ours says
	// mcpchaos sent it (a fault, a liveness probe), not the client.
	byFault string
	ours    bool
	// afterEnd is the accepted DELETE that ended the session before this
	// request began.
	afterEnd *accepted
	// rpc, id and request say what the client POSTed (see forgotten.go).
	rpc, id string
	request bool
	// forged says the request went on under an id the server never
	// issued (forget-session), nil if it did not.
	forged *forged
	// depth is how many 404s to its session came before this request
	// began, each to a request that itself began after the one before.
	depth int
	// status is the first status recorded on the exchange: its answer's
	// head (what follows with a status is its body).
	status int
	// refusal is 1 + the index, in forgottenSessions.refused, of the
	// status this exchange was the first answered with (its body goes
	// there), 0 for none.
	refusal int
}

// accepted is a DELETE the server accepted: its status and its evidence.
type accepted struct {
	status int
	ev     reports.Evidence
}

type sessionEnds struct {
	exchanges map[int64]*httpExchange
	order     []int64
	// ended holds each session whose DELETE the server accepted, until
	// endedKeptUS has passed since (endedOrder, oldest first): a proxy that
	// runs for days sees millions of sessions end, and a request under an
	// id its server ended minutes ago is a client's confusion, not the
	// server serving on.
	ended      map[string]accepted
	endedOrder []string
	reported   map[string]bool
	// fs are the first maxServedAfterDelete sessions served after their
	// DELETE, one finding each; moreServed counts the rest, which the last
	// finding tells (a server that serves on does it to every session).
	fs         []reports.Finding
	moreServed int

	fg forgottenSessions
	cd deadSessions
}

// http notes an http event. When it is the server accepting a DELETE a
// fault sent, it returns the fault's label.
func (s *sessionEnds) http(e *wire.Event) (endedBy string) {
	if e.Exchange == 0 {
		return ""
	}
	if e.HTTP != "" {
		s.request(e)
		return ""
	}
	x := s.exchanges[e.Exchange]
	if x == nil {
		return ""
	}
	if e.Action == "forget-session" && e.Status == 0 {
		x.forged = &forged{ev: evidenceOf(e), id: e.MCPSession, client: x.session, label: e.Fault}
		return ""
	}
	switch {
	case e.Status == 0 || e.ByUs:
	case x.status != 0:
		// The body of an answer whose head came first.
		if e.Fault == "" {
			s.fg.body(x, e)
		}
	default:
		x.status = e.Status
		s.cd.status(x, e)
		if e.Fault == "" {
			s.fg.status(x, e)
		}
	}
	// A status mcpchaos wrote itself (a swallowed probe answer, a dropped
	// notification, a fault's error status) says nothing of the server.
	if x == nil || e.Status == 0 || x.session == "" || e.ByUs || e.Fault != "" {
		return ""
	}
	ok := e.Status >= 200 && e.Status < 300
	switch {
	case x.method == "DELETE" && ok:
		if s.ended == nil {
			s.ended = map[string]accepted{}
		}
		if _, seen := s.ended[x.session]; !seen {
			s.ended[x.session] = accepted{status: e.Status, ev: evidenceOf(e)}
			s.endedOrder = append(s.endedOrder, x.session)
		}
		return x.byFault
	case x.afterEnd != nil && ok && !s.reported[x.session]:
		if s.reported == nil {
			s.reported = map[string]bool{}
		}
		s.reported[x.session] = true
		if len(s.fs) >= maxServedAfterDelete {
			s.moreServed++
			return ""
		}
		s.fs = append(s.fs, reports.NewFinding(reports.RuleServedAfterDelete, fmt.Sprintf(
			"the server accepted the DELETE of session %s (status %d at seq %d) and then served it: a %s of that session, sent after, was answered %d, not 404",
			words.Cut(x.session, 40), x.afterEnd.status, x.afterEnd.ev.Seq, x.method, e.Status), []reports.Evidence{x.afterEnd.ev, evidenceOf(e)}))
	}
	return ""
}

// message notes what the client POSTed on an exchange.
func (s *sessionEnds) message(e *wire.Event) {
	x := s.exchanges[e.Exchange]
	if e.Exchange == 0 || x == nil || x.rpc != "" || e.Method == "" {
		return
	}
	x.rpc, x.id, x.request = e.Method, e.ID, e.Kind == "request"
	s.cd.began(x, e)
}

// maxServedAfterDelete bounds the served-after-delete findings of a
// session: one server bug, seen in each of a proxy's thousands of
// sessions, is a few findings and a count, not thousands.
const maxServedAfterDelete = 3

// findings returns the served-after-delete findings.
func (s *sessionEnds) findings() []reports.Finding {
	if s.moreServed == 0 {
		return s.fs
	}
	fs := slices.Clone(s.fs)
	last := &fs[len(fs)-1]
	last.Message += fmt.Sprintf(" (and %d more %s served after their DELETE the same way)", s.moreServed, words.Plural(s.moreServed, "session", "sessions"))
	return fs
}

// endedKeptUS is how long, in µs, after its DELETE was accepted a session's end is
// remembered: twice the longest a request may take (the deadline that
// progress pushes back, DefaultMaxDeadline), so that a request in flight
// at the end, or a client retrying a call that timed out, is still judged.
const endedKeptUS = int64(2 * DefaultMaxDeadline / time.Microsecond)

// forgetEnded lets go of the sessions that ended more than endedKeptUS
// before t.
func (s *sessionEnds) forgetEnded(t int64) {
	n := 0
	for _, id := range s.endedOrder {
		if t-s.ended[id].ev.TUS <= endedKeptUS {
			break
		}
		delete(s.ended, id)
		delete(s.reported, id)
		n++
	}
	if n > 0 {
		s.endedOrder = slices.Delete(s.endedOrder, 0, n)
	}
}

// sessionOf is the MCP session a message of an HTTP exchange belongs to:
// the Mcp-Session-Id of its exchange's request; "" on stdio, before
// initialize has given one, and for an exchange no longer kept.
func (j *Judger) sessionOf(e *wire.Event) string {
	if e.Exchange == 0 {
		return ""
	}
	if x := j.se.exchanges[e.Exchange]; x != nil {
		return x.session
	}
	return ""
}

func (s *sessionEnds) request(e *wire.Event) {
	s.forgetEnded(e.T)
	if s.exchanges == nil {
		s.exchanges = map[int64]*httpExchange{}
	}
	if len(s.order) >= maxSuspects {
		delete(s.exchanges, s.order[0])
		s.order = s.order[1:]
	}
	method, _, _ := strings.Cut(e.HTTP, " ")
	x := &httpExchange{method: method, session: e.MCPSession}
	if _, by, ok := strings.Cut(e.HTTP, "(sent by fault "); ok {
		x.byFault = strings.TrimSuffix(by, ")")
	}
	// "POST /mcp (injected by fault burst#1)", "(liveness probe of
	// mcpchaos)": the client never sees what such an exchange is answered.
	x.ours = strings.HasSuffix(e.HTTP, ")") && strings.Contains(e.HTTP, " (")
	if end, ok := s.ended[e.MCPSession]; ok && e.MCPSession != "" && method != "DELETE" {
		x.afterEnd = &end
	}
	s.exchanges[e.Exchange] = x
	s.order = append(s.order, e.Exchange)
}
