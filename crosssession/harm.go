package crosssession

import (
	"fmt"
	"slices"

	"github.com/mcpchaos/mcpchaos/internal/words"

	"github.com/mcpchaos/mcpchaos/reports"
)

// harmed is one way a session without faults suffered from a fault that
// struck another: in words, with its evidence.
type harmed struct {
	what string
	ev   reports.Evidence
}

// harm holds a server to keeping a fault in the session it struck: a
// session whose plan had no faults, in a run where another session's fault
// fired, must be served as it would be alone. Its requests left unanswered
// (its own judge's hangs and lost answers, which are folded in here), a 404
// to a session it never ended, and an HTTP 5xx or JSON-RPC error where
// another session's request of the same id, method and tool got a result,
// are harm. A fault that struck the server itself (a signal) confines
// nothing, and harms no session.
func (c *crossing) harm(own []sessionFinding) []sessionFinding {
	var struck *session
	for _, s := range c.j.sessions {
		if s.fired != nil && !c.refused[s.n] {
			struck = s
			break
		}
	}
	if struck == nil {
		return c.lostToAnother(own)
	}
	if slices.ContainsFunc(c.j.sessions, func(s *session) bool { return s.wholeServer }) {
		// A signal to the server's process is every session's fault: each
		// session's judge has excused what it cut short.
		return own
	}
	byVictim := map[int][]harmed{}
	var kept []sessionFinding
	for _, sf := range own {
		victim := c.j.sessions[sf.n-1]
		if victim.faulted || !harmRule(sf.f.Rule) {
			kept = append(kept, sf)
			continue
		}
		what := sf.f.Rule
		if sf.f.Request != nil {
			what = fmt.Sprintf("its %s (id %s) %s", requestLabel(sf.f.Request), sf.f.Request.ID, ruleWords(sf.f.Rule))
		}
		var ev reports.Evidence
		if len(sf.f.Evidence) > 0 {
			ev = sf.f.Evidence[0]
		}
		byVictim[sf.n] = append(byVictim[sf.n], harmed{what: what, ev: ev})
	}
	for _, victim := range c.j.sessions {
		if victim.faulted || c.refused[victim.n] {
			continue
		}
		byVictim[victim.n] = append(byVictim[victim.n], c.failedCalls(victim)...)
		hs := byVictim[victim.n]
		if len(hs) == 0 {
			continue
		}
		c.found = append(c.found, harmFinding(struck, victim, hs))
	}
	return kept
}

// lostToAnother holds a server, in a run without a fault that fired, to
// answering each session as it would alone: a request a session's judge
// found unanswered or lost, while another session's request of the same
// id and method got its answer, lost it to the other client's presence.
// Where the answer went is the leak check's to say when it carried a
// marker; this is what is left when it carried none (a tools/list, a ping).
func (c *crossing) lostToAnother(own []sessionFinding) []sessionFinding {
	// A session that lost one answer whose twin was answered lost the
	// others it lost the same way: its requests after the first went
	// unanswered for the same cause (the probe sends nothing but a ping
	// once one is, and the server's answer to that goes astray too).
	lost := map[int]bool{}
	for _, sf := range own {
		if sf.f.Request != nil && lostForGood(sf.f.Rule) && c.answeredTwin(sf.n, sf.f.Request) != nil {
			lost[sf.n] = true
		}
	}
	var kept []sessionFinding
	byVictim := map[int][]sessionFinding{}
	var order []int
	for _, sf := range own {
		if !lost[sf.n] || sf.f.Request == nil || !lostForGood(sf.f.Rule) {
			kept = append(kept, sf)
			continue
		}
		if byVictim[sf.n] == nil {
			order = append(order, sf.n)
		}
		byVictim[sf.n] = append(byVictim[sf.n], sf)
	}
	for _, n := range order {
		fs := byVictim[n]
		// The first with a twin leads; the others follow it.
		i := slices.IndexFunc(fs, func(sf sessionFinding) bool { return c.answeredTwin(n, sf.f.Request) != nil })
		if i < 0 {
			i = 0
		}
		fs[0], fs[i] = fs[i], fs[0]
		twin := c.answeredTwin(n, fs[0].f.Request)
		first := fs[0].f
		msg := fmt.Sprintf("session %d's %s (id %s) %s, while session %d's of the same id, sent at once, was answered: with two clients at once, and no fault having fired, the server lost one client's answer (its judge: %s)",
			n, requestLabel(first.Request), first.Request.ID, ruleWords(first.Rule), twin.session.n, words.Cut(first.Message, 200))
		if more := len(fs) - 1; more > 0 {
			msg += fmt.Sprintf(", and %d more of its requests went the same way", more)
		}
		ev := slices.Clone(first.Evidence)
		if twin.answerEv != nil {
			ev = append(ev, withSession(*twin.answerEv, twin.session.n))
		}
		if len(ev) > maxLeakEvidence {
			ev = ev[:maxLeakEvidence]
		}
		f := reports.NewFinding(reports.RuleCrossSessionLost, msg, ev)
		f.Sessions = []int{n, twin.session.n}
		f.Request = first.Request
		c.found = append(c.found, f)
	}
	return kept
}

// lostForGood says a rule is an error about a request left without its
// answer: a warning (a handler still talking on its stream past the
// deadline, an answer lost at a stdio shutdown) must not become an error
// by being read beside another session.
func lostForGood(rule string) bool {
	return rule == reports.RuleUnanswered || rule == reports.RuleLostResponse
}

// twinRequest is another session's request of the same id and method.
type twinRequest struct {
	*request
	session *session
}

// answeredTwin is another judged session's request of req's id, method and
// tool that a result or an error answered, or nil.
func (c *crossing) answeredTwin(n int, req *reports.Request) *twinRequest {
	for _, s := range c.j.sessions {
		if s.n == n || c.refused[s.n] {
			continue
		}
		if t := s.requests[req.ID]; t != nil && t.method == req.Method && (req.Tool == "" || t.tool == req.Tool) && (t.result || t.errored) {
			return &twinRequest{request: t, session: s}
		}
	}
	return nil
}

// failedCalls are the victim's requests that failed where they should not
// have: a 404 to a session its client never ended, or a 5xx or JSON-RPC
// error where another session's request of the same id, method and tool
// got a result.
func (c *crossing) failedCalls(victim *session) []harmed {
	var out []harmed
	for _, r := range sortedRequests(victim) {
		switch {
		case r.status == 404 && !victim.deleted && r != victim.opening && !r.sessionless:
			out = append(out, harmed{what: fmt.Sprintf("its %s (id %s) was answered HTTP 404, the status of a session that is gone, though its client never ended it", r.label(), r.id), ev: withSession(*r.statusEv, victim.n)})
		case (r.status >= 500 || r.errored) && c.twinSucceeded(victim, r):
			how, ev := "was answered with a JSON-RPC error", r.answerEv
			if r.status >= 500 {
				how, ev = fmt.Sprintf("was answered HTTP %d", r.status), r.statusEv
			}
			out = append(out, harmed{what: fmt.Sprintf("its %s (id %s) %s, where the same request in another session got its result", r.label(), r.id, how), ev: withSession(*ev, victim.n)})
		}
	}
	return out
}

// twinSucceeded says another session's request of r's id, method and tool
// got a result: the sessions run one workload, so a failure one of them
// alone met is not the request's.
func (c *crossing) twinSucceeded(victim *session, r *request) bool {
	for _, s := range c.j.sessions {
		if s == victim || c.refused[s.n] {
			continue
		}
		if t := s.requests[r.id]; t != nil && t.method == r.method && t.tool == r.tool && t.result {
			return true
		}
	}
	return false
}

func sortedRequests(s *session) []*request {
	out := make([]*request, 0, len(s.requests))
	for _, r := range s.requests {
		out = append(out, r)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].ev.Seq < out[j-1].ev.Seq; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// harmRule says a session's own finding is a call of its that failed to
// get its answer: what a fault elsewhere must not cause.
func harmRule(rule string) bool {
	switch rule {
	// Errors only: a handler slower than the deadline while it still
	// talks on its stream (unanswered-while-active) is a warning, and
	// holding it against the server as harm would make it an error.
	case reports.RuleUnanswered, reports.RuleLostResponse,
		reports.RuleTaskNeverFinished, reports.RuleTaskForgotten, reports.RuleTaskResultLost:
		return true
	}
	return false
}

func ruleWords(rule string) string {
	switch rule {
	case reports.RuleUnanswered:
		return "was never answered"
	case reports.RuleUnansweredActive:
		return "was not answered within its deadline"
	case reports.RuleLostResponse:
		return "lost its answer"
	}
	return "failed (" + rule + ")"
}

func harmFinding(struck, victim *session, hs []harmed) reports.Finding {
	msg := fmt.Sprintf("a fault confined to session %d (%s) harmed session %d, which had no fault: %s", struck.n, struck.firedBy, victim.n, hs[0].what)
	if more := len(hs) - 1; more > 0 {
		msg += fmt.Sprintf(", and %d more of its requests failed", more)
	}
	msg += ". What happens to one client's session (its stream cut, its DELETE) must not reach another's calls"
	ev := []reports.Evidence{withSession(*struck.fired, struck.n)}
	for _, h := range hs {
		if len(ev) == maxLeakEvidence {
			break
		}
		ev = append(ev, h.ev)
	}
	f := reports.NewFinding(reports.RuleCrossSessionFault, msg, ev)
	f.Sessions = []int{struck.n, victim.n}
	return f
}
