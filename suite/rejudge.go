package suite

import (
	"fmt"
	"os"
	"slices"
	"strings"

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

// judgedRun is one transcript judged again.
type judgedRun struct {
	path       string
	session    wire.Event
	verdict    judge.Verdict
	durationMS int64
}

// target names what a run tested (the peer under test, its command or
// URL), so that a scenario is compared with the baseline of its own target.
func (r judgedRun) target() string {
	s := r.session
	return s.Role + "\x00" + strings.Join(s.Command, "\x00") + "\x00" + s.URL
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
	r := judgedRun{path: path, session: events[i], verdict: judge.Session(events)}
	r.durationMS = (events[len(events)-1].T - events[i].T) / 1000
	return r, nil
}
