package reports

import (
	"strings"
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

// The text summary and Markdown say what a search covered and what it
// found, shrunk; a finding that never reproduced says so.
func TestExploreSummary(t *testing.T) {
	r := &Report{Schema: Schema, Outcome: OutcomeFail, Baseline: &ScenarioResult{Name: "baseline", Outcome: OutcomePass},
		Explore: &Exploration{BudgetMS: 300000, ElapsedMS: 61000, BudgetEnded: true, Points: 40, SystematicRuns: 20, SkippedByReduction: 12,
			CombinationRuns: 3, NotLanded: 2, Unreached: []string{"fragment"},
			Coverage: []ExploreCoverage{{Family: "duplicate", Method: "notifications/initialized", Points: 1, Run: 1, Found: 1}},
			Found: []ExploreFinding{
				{Signature: "crash/crash-signature go:panic", FoundAfterMS: 1500, First: []string{"a", "b"}, Minimal: []string{"a"}, ShrinkRuns: 4, Reproduced: 5, Tries: 5},
				{Signature: "hang/client-hang", FoundAfterMS: 9000, First: []string{"c"}, Minimal: []string{"c"}, Tries: 5},
			}}}
	var text, md strings.Builder
	WriteSummary(&text, r)
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"explored 40 fault points in 1m1s of a 5m0s budget: 20 run one fault each, 12 skipped as equivalent to one that landed (dynamic reduction), 3 combinations of two or three faults; 2 of the search's runs did not land",
		"the budget ended the search with 8 points not run",
		"families not reached: fragment",
		"found crash/crash-signature go:panic after 1.5s, shrunk from 2 to 1 fault in 4 runs, reproduced 5 of 5",
		"found hang/client-hang after 9s, once: not again in 5 re-runs, reported with the plan that found it",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(md.String(), "| duplicate | notifications/initialized | 1 | 1 | 0 | 0 | 1 |") {
		t.Errorf("the Markdown lacks the coverage row:\n%s", md.String())
	}
}
