package suite

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
)

// seedFor is the seed a scenario runs with: its own when it pins one.
func seedFor(sc faults.Scenario, seed uint64) uint64 {
	if sc.Seed != nil {
		return *sc.Seed
	}
	return seed
}

// deadlineFor is the deadline a scenario runs with: its own when it sets one.
func deadlineFor(sc faults.Scenario, deadline time.Duration) time.Duration {
	if sc.Deadline > 0 {
		return sc.Deadline
	}
	return deadline
}

func named(sc faults.Scenario) string {
	if sc.Source != "" {
		return fmt.Sprintf("scenario %s (%s)", sc.Name, sc.Source)
	}
	return "scenario " + sc.Name
}

// checkServerScenarios refuses what mcpchaos test cannot honour: an
// expectation about a client program's exit, and a fault that names a
// session the scenario does not run.
func checkServerScenarios(scs []faults.Scenario) error {
	for _, sc := range scs {
		parsed, err := sc.Parse()
		if err != nil {
			return err
		}
		if err := sc.CheckSessions(parsed); err != nil {
			return err
		}
		if sc.Expect != "" {
			return fmt.Errorf("%s: expect: %s says what a client program must do, which mcpchaos test-client judges; mcpchaos test probes a server (remove expect:, or run it with test-client)", named(sc), sc.Expect)
		}
		if sc.HangAfter > 0 {
			return fmt.Errorf("%s: hang-after: %s is a client program's hang horizon, which mcpchaos test-client judges; mcpchaos test probes a server, whose requests have --deadline (remove hang-after:, or run it with test-client)", named(sc), sc.HangAfter)
		}
	}
	return nil
}

// checkClientScenarios refuses what mcpchaos test-client cannot honour: the
// client program is its own workload and picks its own protocol era.
func checkClientScenarios(scs []faults.Scenario) error {
	for _, sc := range scs {
		if !sc.Workload.IsZero() {
			return fmt.Errorf("%s: workload: shapes the probe client of mcpchaos test; under test-client the client program is the workload (remove workload:, or run it with mcpchaos test)", named(sc))
		}
		if sc.Era != "" {
			return fmt.Errorf("%s: era: %s asks the probe client of mcpchaos test for an era; under test-client the client program picks it (remove era:, or run it with mcpchaos test)", named(sc), sc.Era)
		}
	}
	return nil
}

// errorKinds are the kinds of the findings that fail a run, sorted, each
// once.
func errorKinds(fs []reports.Finding) []string {
	out := []string{}
	for _, f := range fs {
		if f.Severity != reports.SeverityWarning && !slices.Contains(out, f.Kind) {
			out = append(out, f.Kind)
		}
	}
	slices.Sort(out)
	return out
}

// ApplyExpectation holds a run against its scenario's expected findings
// (Scenario.Findings). When the kinds of its error findings are exactly the
// expected ones, those findings are marked expected: still reported, they
// no longer fail the run. Otherwise an expectation finding says what
// differed, which fails the run even when the bug it pinned is gone (the
// file must then be updated).
func ApplyExpectation(sc faults.Scenario, seed uint64, repro string, v *judge.Verdict) {
	if len(sc.Findings) == 0 {
		return
	}
	want := slices.Clone(sc.Findings)
	slices.Sort(want)
	want = slices.Compact(want)
	got := errorKinds(v.Findings)
	if slices.Equal(want, got) {
		for i := range v.Findings {
			if slices.Contains(want, v.Findings[i].Kind) {
				v.Findings[i].Expected = true
			}
		}
		return
	}
	found := "none"
	if len(got) > 0 {
		found = strings.Join(got, ", ")
	}
	f := reports.NewFinding(reports.RuleScenarioExpectation,
		fmt.Sprintf("%s expects the findings %s, the run found %s; if the target changed on purpose, update the scenario's findings:",
			named(sc), strings.Join(want, ", "), found), []reports.Evidence{})
	f.Scenario, f.Seed, f.Repro = sc.Name, seed, repro
	v.Findings = append(v.Findings, f)
}
