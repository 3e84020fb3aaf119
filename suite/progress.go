package suite

import (
	"time"

	"github.com/mcpchaos/mcpchaos/reports"
)

// Progress hears of each scenario of a matrix as it starts and as it ends,
// the baseline first, for a live display of a long run. Scenarios run in
// parallel, so its methods may be called from several goroutines at once.
type Progress interface {
	Started(scenario string)
	// Finished gives the scenario's outcome and its own findings (those
	// the baseline did not already have), as the report will.
	Finished(scenario, outcome string, findings int, took time.Duration)
}

// withProgress runs one scenario between p's calls; base is the baseline's
// run (nil for the baseline itself), whose findings are not the
// scenario's own.
func withProgress(p Progress, name string, base *scenarioRun, run func() (*scenarioRun, error)) (*scenarioRun, error) {
	if p == nil {
		return run()
	}
	p.Started(name)
	start := time.Now()
	r, err := run()
	if err != nil {
		p.Finished(name, reports.OutcomeError, 0, time.Since(start))
		return r, err
	}
	own := r.verdict.Findings
	if base != nil {
		own, _ = reports.BeyondBaseline(base.verdict.Findings, own)
	}
	p.Finished(name, reports.ScenarioOutcome(own, r.result.Indeterminate), len(own), time.Since(start))
	return r, nil
}
