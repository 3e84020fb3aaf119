package suite

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/crosssession"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Rejudge judges stored transcripts (test --transcript-dir, wrap
// --transcript) again, offline, one scenario each, into a report with the
// findings the live run reported: a finding the baseline of the same target
// has too is reported once, in the baseline.
func Rejudge(paths []string, tool reports.Tool) (*reports.Report, error) {
	report := &reports.Report{Schema: reports.Schema, Tool: tool}
	var runs []judgedRun
	for _, path := range paths {
		r, err := judgeFile(path)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	runs, err := joinSessions(runs)
	if err != nil {
		return nil, err
	}
	// As the live run does, a fault scenario is not blamed for what the
	// baseline of the same target found too: it is reported once, there.
	baselines := map[string][]reports.Finding{}
	for _, r := range runs {
		if r.session.Scenario == faults.Baseline.Name {
			baselines[r.target()] = append(baselines[r.target()], r.verdict.Findings...)
		}
	}
	for _, r := range runs {
		s, findings := r.session, r.verdict.Findings
		res := reports.ScenarioResult{Name: s.Scenario, Indeterminate: r.verdict.Indeterminate, Notes: r.verdict.Notes, Transcript: r.path,
			DurationMS: r.durationMS}
		if len(r.paths) > 1 {
			res.Sessions, res.Transcripts = len(r.paths), r.paths
		}
		if base, ok := baselines[r.target()]; ok && s.Scenario != faults.Baseline.Name {
			var known int
			if findings, known = reports.BeyondBaseline(base, findings); known > 0 {
				res.Notes = append(res.Notes, reports.KnownNote(known))
			}
		}
		res.Findings, res.Outcome = len(findings), reports.ScenarioOutcome(findings, r.verdict.Indeterminate)
		if s.Seed != nil {
			report.Seed, res.Seed = *s.Seed, *s.Seed
		}
		report.Target.Command = s.Command
		report.Scenarios = append(report.Scenarios, res)
		report.Findings = append(report.Findings, findings...)
	}
	report.Outcome = reports.OutcomePass
	if reports.Failing(report.Findings) {
		report.Outcome = reports.OutcomeFail
	}
	return report, nil
}

// judgedRun is one transcript judged again, or the transcripts of the
// sessions of one run of several, judged together.
type judgedRun struct {
	path       string
	session    wire.Event
	verdict    judge.Verdict
	durationMS int64
	// events are the transcript's, kept for a run of several sessions
	// until the sessions are judged together; paths are their transcripts.
	events []wire.Event
	paths  []string
}

// target names what a run tested (the peer under test, its command or
// URL), so that a scenario is compared with the baseline of its own target.
func (r judgedRun) target() string {
	s := r.session
	return s.Role + "\x00" + strings.Join(s.Command, "\x00") + "\x00" + cmp.Or(s.URLTemplate, s.URL)
}

func judgeFile(path string) (judgedRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return judgedRun{}, err
	}
	defer f.Close()
	var events []wire.Event
	if err := wire.ReadTranscript(f, func(e wire.Event) error {
		events = append(events, e)
		return nil
	}); err != nil {
		return judgedRun{}, fmt.Errorf("%s: %w", path, err)
	}
	// The CPU sampler starts with the run, so a cpu-share event may come
	// before the session event (the judge reads it either way); one first
	// made mcpchaos judge refuse the transcripts of 2 of the 31 corpus
	// servers' explore runs.
	i := slices.IndexFunc(events, func(e wire.Event) bool { return e.Type != wire.EventCPUShare })
	if i < 0 || events[i].Type != wire.EventSession {
		return judgedRun{}, fmt.Errorf("%s does not start with a session event; is it an mcpchaos transcript?", path)
	}
	r := judgedRun{path: path, session: events[i], verdict: JudgeOne(events), paths: []string{path}}
	r.durationMS = (events[len(events)-1].T - events[i].T) / 1000
	if r.session.Sessions > 1 {
		r.events = events
	}
	return r, nil
}

// joinSessions judges the transcripts of each run of several sessions
// together, as the live run did: they are the records of one run when they
// name the same scenario, target and seed. Every session's transcript must
// be there; a run missing one cannot be judged across its sessions.
func joinSessions(runs []judgedRun) ([]judgedRun, error) {
	var out []judgedRun
	groups := map[string][]judgedRun{}
	var order []string
	for _, r := range runs {
		if r.session.Sessions <= 1 {
			out = append(out, r)
			continue
		}
		k := r.target() + "\x00" + r.session.Scenario + "\x00" + fmt.Sprint(r.session.Sessions)
		if r.session.Seed != nil {
			k += "\x00" + fmt.Sprint(*r.session.Seed)
		}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		g := groups[k]
		slices.SortFunc(g, func(a, b judgedRun) int { return a.session.Session - b.session.Session })
		n := g[0].session.Sessions
		var events [][]wire.Event
		var paths []string
		for i, r := range g {
			if r.session.Session != i+1 || len(g) != n {
				return nil, fmt.Errorf("scenario %s ran %d sessions side by side, and these transcripts hold sessions %s: give every session's transcript (%s)",
					g[0].session.Scenario, n, sessionNumbers(g), strings.Join(pathsOf(g), ", "))
			}
			events = append(events, r.events)
			paths = append(paths, r.path)
		}
		v := JudgeSessions(events)
		joined := g[0]
		joined.verdict, joined.paths, joined.events = v, paths, nil
		for _, r := range g[1:] {
			joined.durationMS = max(joined.durationMS, r.durationMS)
		}
		out = append(out, joined)
	}
	return out, nil
}

func sessionNumbers(g []judgedRun) string {
	var ns []string
	for _, r := range g {
		ns = append(ns, fmt.Sprint(r.session.Session))
	}
	return strings.Join(ns, ", ")
}

func pathsOf(g []judgedRun) []string {
	var ps []string
	for _, r := range g {
		ps = append(ps, r.path)
	}
	return ps
}

// JudgeOne judges one transcript as mcpchaos judges it live: the session's
// judge, and, over HTTP, the answers on one MCP session's stream to another
// session's request (a proxy relaying several clients to one server).
func JudgeOne(events []wire.Event) judge.Verdict {
	v := judge.Session(events)
	streams := crosssession.NewStreams()
	for _, e := range events {
		streams.Add(e)
	}
	v.Findings = append(v.Findings, streams.Findings()...)
	return v
}

// JudgeSessions judges the transcripts of the sessions of one run of
// several, the first session's first: each on its own, then side by side
// (package crosssession), as the live run judged them.
func JudgeSessions(sessions [][]wire.Event) judge.Verdict {
	cross := crosssession.New(len(sessions))
	per := make([]judge.Verdict, len(sessions))
	for i, events := range sessions {
		per[i] = judge.Session(events)
		for _, e := range events {
			cross.Add(i+1, e)
		}
	}
	return cross.Verdict(per)
}
