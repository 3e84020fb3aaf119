package reports

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Two shards of one search that found the same bug: the merged report
// keeps it once, adds the counts up and joins the coverage rows.
func TestMergeExploreShards(t *testing.T) {
	shard := func(k int, found []ExploreFinding, cov []ExploreCoverage, unreached []string) *Report {
		r := &Report{Schema: Schema, Seed: 3, Target: Target{Command: []string{"srv"}}, Outcome: OutcomeFail,
			Baseline: &ScenarioResult{Name: "baseline", Outcome: OutcomePass},
			Shard:    &Shard{Index: k, Total: 2, Matrix: ExploreMatrix, Run: ShardRun(3, Target{Command: []string{"srv"}}, ExploreMatrix, 2)},
			Explore:  &Exploration{Points: 10, SystematicRuns: 6, SkippedByReduction: 4, Coverage: cov, Found: found, Unreached: unreached}}
		for _, f := range found {
			r.Scenarios = append(r.Scenarios, ScenarioResult{Name: f.Scenario, Outcome: OutcomeFail, Findings: 1})
			r.Findings = append(r.Findings, Finding{Kind: KindCrash, Severity: SeverityError, Scenario: f.Scenario})
		}
		return r
	}
	a := shard(1, []ExploreFinding{{Signature: "crash", Scenario: "explore.eof-1"}},
		[]ExploreCoverage{{Family: "eof", Method: "tools/call", Points: 3, Run: 1, Skipped: 2, Found: 1}}, []string{"stall"})
	b := shard(2, []ExploreFinding{{Signature: "crash", Scenario: "explore.eof-2"}, {Signature: "hang", Scenario: "explore.delay-1"}},
		[]ExploreCoverage{{Family: "eof", Method: "tools/call", Points: 2, Run: 2, Found: 1}, {Family: "delay", Method: "ping", Points: 1, Run: 1, Found: 1}}, []string{"stall", "drop"})
	merged, err := MergeShards([]string{"a.json", "b.json"}, []*Report{a, b})
	if err != nil {
		t.Fatal(err)
	}
	x := merged.Explore
	var scenarios []string
	for _, s := range merged.Scenarios {
		scenarios = append(scenarios, s.Name)
	}
	if diff := cmp.Diff([]string{"explore.eof-1", "explore.delay-1"}, scenarios); diff != "" {
		t.Errorf("merged scenarios (-want +got):\n%s", diff)
	}
	if len(merged.Findings) != 2 {
		t.Errorf("%d findings merged, want the crash once and the hang", len(merged.Findings))
	}
	want := []ExploreCoverage{
		{Family: "delay", Method: "ping", Points: 1, Run: 1, Found: 1},
		{Family: "eof", Method: "tools/call", Points: 5, Run: 3, Skipped: 2, Found: 2},
	}
	if diff := cmp.Diff(want, x.Coverage); diff != "" {
		t.Errorf("merged coverage (-want +got):\n%s", diff)
	}
	if x.Points != 20 || x.SystematicRuns != 12 || x.SkippedByReduction != 8 {
		t.Errorf("merged counts: %d points, %d runs, %d skipped; want 20, 12, 8", x.Points, x.SystematicRuns, x.SkippedByReduction)
	}
	if diff := cmp.Diff([]string{"stall"}, x.Unreached); diff != "" {
		t.Errorf("unreached by every shard (-want +got):\n%s", diff)
	}
}
