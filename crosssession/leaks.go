package crosssession

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
)

// leak is what crossed from one session to another: every message, in the
// order found, and what it was in words.
type leak struct {
	from, to *session
	what     []string
	ev       []reports.Evidence
	// req is the request of the session it came from that the first
	// crossing belongs to, when known.
	req *request
	// answers are the ids of the answers that crossed; robbed are the
	// findings of the session they came from about those requests, which
	// never got their answers (folded in: the crossing is their cause).
	answers []string
	robbed  []string
}

// maxLeakEvidence bounds the messages a leak finding cites; the rest are
// counted.
const maxLeakEvidence = 4

// leaks finds one session's messages delivered to another: any message
// but a list_changed broadcast that carries another session's marker (an
// answer only when it answers no request of the receiving session's, or
// answers one that carried the receiver's own marker and does not echo it:
// shared state read back is no leak), and an answer whose id the receiving
// session had already had answered, or never sent, while the session that
// did send that id never got its answer. The sessions' own findings that
// such a crossing explains (the hang of the session robbed, the duplicate
// answer of the one that got its answer) are folded into it.
func (c *crossing) leaks(own []sessionFinding) []sessionFinding {
	type pair struct{ from, to int }
	found := map[pair]*leak{}
	var order []pair
	at := func(from, to *session) *leak {
		p := pair{from.n, to.n}
		if found[p] == nil {
			found[p] = &leak{from: from, to: to}
			order = append(order, p)
		}
		return found[p]
	}
	for _, to := range c.j.sessions {
		if c.refused[to.n] {
			continue
		}
		for _, m := range to.marked {
			for n, text := range m.markers {
				if n == to.n || n < 1 || n > len(c.j.sessions) || c.refused[n] {
					continue
				}
				from := c.j.sessions[n-1]
				if from.marker == "" || from.marker != text {
					continue
				}
				what, ok := to.crossed(m, from)
				if !ok {
					continue
				}
				l := at(from, to)
				l.what = append(l.what, what)
				l.ev = append(l.ev, withSession(m.ev, to.n))
				if l.req == nil {
					l.req = from.origin(m)
				}
				if m.kind == "response" || m.kind == "error" {
					l.answers = append(l.answers, m.id)
				}
			}
		}
	}
	own = c.crossedAnswers(own, at)
	own = foldRobbed(own, found)
	for _, p := range order {
		c.found = append(c.found, found[p].finding())
	}
	return own
}

// crossed says whether the marked message m, received by session s and
// carrying the marker of session from, is from's: what it is in words.
func (s *session) crossed(m markedMessage, from *session) (string, bool) {
	switch m.kind {
	case "notification":
		if strings.HasSuffix(m.method, "/list_changed") {
			return "", false
		}
		if m.method == "notifications/progress" {
			return fmt.Sprintf("a notifications/progress for session %d's progress token", from.n), true
		}
		return fmt.Sprintf("a %s carrying session %d's data", m.method, from.n), true
	case "request":
		return fmt.Sprintf("a server-to-client %s request carrying session %d's data", m.method, from.n), true
	case "response", "error":
		r := s.requests[m.id]
		if r == nil {
			return fmt.Sprintf("an answer (id %s) to no request of its own, carrying session %d's data", m.id, from.n), true
		}
		if !r.marked || m.markers[s.n] == s.marker {
			// Its request named nothing of its own (a listing that reads
			// back state the sessions share), or the answer echoes its own.
			return "", false
		}
		return fmt.Sprintf("the answer to its %s (id %s) carrying session %d's data and not its own", r.label(), m.id, from.n), true
	}
	return "", false
}

// origin is the request of session s that a message another session got
// came from: the one whose progress token it carries, else the one of the
// same id that carried s's marker; nil when neither is known (a log line
// of s's data may come from any of its calls).
func (s *session) origin(m markedMessage) *request {
	for _, r := range s.requests {
		if m.token != "" && r.token == m.token {
			return r
		}
	}
	if r := s.requests[m.id]; r != nil && r.marked && m.kind != "notification" && m.kind != "request" {
		return r
	}
	return nil
}

// crossedAnswers finds answers that went to the wrong session without a
// marker to tell: session to got an answer to an id it had had answered
// already (or never sent), while session from's request of that id was
// never answered. Both sessions' findings about it are folded into the
// crossing.
func (c *crossing) crossedAnswers(own []sessionFinding, at func(from, to *session) *leak) []sessionFinding {
	folded := map[int]bool{}
	for i, extra := range own {
		if extra.f.Request == nil || (extra.f.Rule != reports.RuleDuplicateResponse && extra.f.Rule != reports.RuleUnknownResponse) {
			continue
		}
		for k, robbed := range own {
			if k == i || robbed.n == extra.n || folded[k] || robbed.f.Request == nil || robbed.f.Request.ID != extra.f.Request.ID || !unanswered(robbed.f.Rule) {
				continue
			}
			from, to := c.j.sessions[robbed.n-1], c.j.sessions[extra.n-1]
			l := at(from, to)
			l.what = append(l.what, fmt.Sprintf("an answer to id %s (its %s finding) while session %d's %s of that id was never answered (its %s finding)",
				extra.f.Request.ID, extra.f.Rule, from.n, requestLabel(robbed.f.Request), robbed.f.Rule))
			l.ev = append(l.ev, extra.f.Evidence...)
			l.ev = append(l.ev, robbed.f.Evidence...)
			if l.req == nil {
				l.req = from.requests[robbed.f.Request.ID]
			}
			folded[i], folded[k] = true, true
			break
		}
		if folded[i] {
			continue
		}
		// A session whose opening request was answered on another's stream
		// has no finding of its own about it: its probe never opened.
		for n := range c.robbed {
			from := c.j.sessions[n-1]
			if n == extra.n || from.opening.id != extra.f.Request.ID {
				continue
			}
			to := c.j.sessions[extra.n-1]
			l := at(from, to)
			l.what = append(l.what, fmt.Sprintf("an answer to id %s (its %s finding) while session %d's %s of that id was never answered, on its own stream or at all, and its session never opened",
				extra.f.Request.ID, extra.f.Rule, from.n, from.opening.method))
			l.ev = append(l.ev, extra.f.Evidence...)
			if l.req == nil {
				l.req = from.opening
			}
			folded[i] = true
			break
		}
	}
	out := own[:0:0]
	for i, sf := range own {
		if !folded[i] {
			out = append(out, sf)
		}
	}
	return out
}

// foldRobbed folds into each leak through which answers crossed the
// findings of the session they came from that say its requests went
// unanswered: once the server is seen sending that session's answers to
// another, that is why (the answers that found no stream of the other
// session's to go down are lost without a trace to match them by).
func foldRobbed[K comparable](own []sessionFinding, found map[K]*leak) []sessionFinding {
	out := own[:0:0]
	for _, sf := range own {
		folded := false
		for _, l := range found {
			if sf.n != l.from.n || !unanswered(sf.f.Rule) || len(l.answers) == 0 {
				continue
			}
			l.robbed = append(l.robbed, fmt.Sprintf("%s (%s)", words.Cut(sf.f.Message, 160), sf.f.Rule))
			folded = true
			break
		}
		if !folded {
			out = append(out, sf)
		}
	}
	return out
}

// unanswered says a rule is about a request left without its answer.
func unanswered(rule string) bool {
	switch rule {
	case reports.RuleUnanswered, reports.RuleUnansweredActive, reports.RuleLostResponse, reports.RuleLostAtShutdown:
		return true
	}
	return false
}

func (l *leak) finding() reports.Finding {
	head := fmt.Sprintf("session %d received what belongs to session %d: %s", l.to.n, l.from.n, l.what[0])
	if more := len(l.what) - 1; more > 0 {
		head += fmt.Sprintf(", and %d more %s", more, words.Plural(more, "message", "messages"))
	}
	msg := head + ". The server gave one client's data to another: an answer, progress or log line of one user's call reached a different user"
	if len(l.robbed) > 0 {
		msg += fmt.Sprintf("; session %d's own judge found what that cost it: %s", l.from.n, strings.Join(l.robbed, "; "))
	}
	if l.from.marker != "" {
		msg += fmt.Sprintf(" (session %d's client put its marker %s in its clientInfo, progress tokens and string arguments)", l.from.n, l.from.marker)
	}
	ev := l.ev
	if l.req != nil {
		ev = append([]reports.Evidence{withSession(l.req.ev, l.from.n)}, ev...)
	}
	if len(ev) > maxLeakEvidence {
		ev = ev[:maxLeakEvidence]
	}
	f := reports.NewFinding(reports.RuleCrossSessionMessage, msg, ev)
	f.Sessions = []int{l.from.n, l.to.n}
	if l.req != nil {
		f.Request = &reports.Request{ID: l.req.id, Method: l.req.method, Tool: l.req.tool}
	}
	return f
}

func withSession(ev reports.Evidence, n int) reports.Evidence {
	ev.Session = n
	return ev
}

func (r *request) label() string {
	if r.tool != "" {
		return fmt.Sprintf("%s of %s", r.method, r.tool)
	}
	return r.method
}

func requestLabel(r *reports.Request) string {
	if r.Tool != "" {
		return fmt.Sprintf("%s of %s", r.Method, r.Tool)
	}
	return cmp.Or(r.Method, "request")
}
