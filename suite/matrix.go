package suite

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// matrix is one run of a scenario matrix: the baseline and the fault
// scenarios, n at a time.
type matrix struct {
	n         int
	baseline  faults.Scenario
	scenarios []faults.Scenario
	progress  Progress
	run       func(context.Context, faults.Scenario) (*scenarioRun, error)
	// unusable says the baseline could not test the target (it did not
	// start or initialize): the scenarios running beside it are stopped,
	// and nothing but the baseline is returned.
	unusable func(base *scenarioRun) bool
}

// runMatrix runs the baseline and the scenarios. With one at a time the
// baseline runs alone first, as it always did. With more, it runs beside
// the scenarios from the start: every scenario runs its own fresh server
// (or client), so nothing but the baseline's role as the reference of
// what a fault adds holds them apart, and that role is played after all
// have ended. Waiting for it first made a matrix take the baseline's time
// plus the longest scenario's. The runs come back in the scenarios' order;
// the progress display hears of each as it starts and ends, a scenario's
// end once the baseline's findings are known (its own findings are those
// beyond them).
func (m matrix) runMatrix(ctx context.Context) (base *scenarioRun, runs []*scenarioRun, err error) {
	// --scenario baseline (the repro line of a baseline finding) selects
	// the run that always happens.
	scenarios := slices.DeleteFunc(slices.Clone(m.scenarios), func(sc faults.Scenario) bool { return sc.Name == faults.Baseline.Name })
	if m.n <= 1 {
		base, err = m.one(ctx, m.baseline, nil, nil)
		if err != nil || m.unusable(base) {
			return base, nil, err
		}
		for _, sc := range scenarios {
			r, err := m.one(ctx, sc, nil, func() *scenarioRun { return base })
			if err != nil {
				return nil, nil, err
			}
			runs = append(runs, r)
		}
		return base, runs, nil
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, m.n)
	baseDone := make(chan struct{})
	var baseErr error
	// The baseline takes its slot before any scenario can.
	sem <- struct{}{}
	go func() {
		defer close(baseDone)
		base, baseErr = m.one(ctx, m.baseline, func() { <-sem }, nil)
		if baseErr != nil || m.unusable(base) {
			cancel()
		}
	}()
	waitBase := func() *scenarioRun {
		<-baseDone
		return base
	}
	runs = make([]*scenarioRun, len(scenarios))
	errs := make([]error, len(scenarios))
	var wg sync.WaitGroup
	for i, sc := range scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			runs[i], errs[i] = m.one(ctx, sc, func() { <-sem }, waitBase)
		}()
	}
	wg.Wait()
	<-baseDone
	if baseErr != nil {
		return nil, nil, baseErr
	}
	if m.unusable(base) {
		return base, nil, nil
	}
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return base, runs, nil
}

// one runs a scenario between the progress display's calls. release, if
// not nil, gives back the scenario's slot as soon as the run ends, before
// the wait for the baseline's findings (base, nil for the baseline itself),
// which only the display needs.
func (m matrix) one(ctx context.Context, sc faults.Scenario, release func(), base func() *scenarioRun) (*scenarioRun, error) {
	if m.progress != nil {
		m.progress.Started(sc.Name)
	}
	start := time.Now()
	r, err := m.run(ctx, sc)
	took := time.Since(start)
	if release != nil {
		release()
	}
	m.finished(sc.Name, r, err, took, base)
	return r, err
}

func (m matrix) finished(name string, r *scenarioRun, err error, took time.Duration, base func() *scenarioRun) {
	if m.progress == nil {
		return
	}
	if err != nil {
		if base != nil {
			if b := base(); b == nil || m.unusable(b) {
				return
			}
		}
		m.progress.Finished(name, reports.OutcomeError, 0, took)
		return
	}
	own := r.verdict.Findings
	if base != nil {
		b := base()
		if b == nil || m.unusable(b) {
			// The matrix ends with the baseline's set-up error; what ran
			// beside it, or was stopped, is not a result.
			return
		}
		own, _ = reports.BeyondBaseline(b.verdict.Findings, own)
	}
	m.progress.Finished(name, reports.ScenarioOutcome(own, r.result.Indeterminate), len(own), took)
}
