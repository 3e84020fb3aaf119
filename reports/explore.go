package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
)

// Exploration is what mcpchaos explore searched and what it found: the
// report's scenarios are then the smallest plans of what it found, each
// with its findings.
type Exploration struct {
	BudgetMS  int64 `json:"budget_ms"`
	ElapsedMS int64 `json:"elapsed_ms"`
	// BudgetEnded says the budget, not the fault space or --max-runs,
	// ended the search.
	BudgetEnded bool `json:"budget_ended,omitempty"`
	// Points is how many fault points the baseline's messages give (in
	// this shard, under --shard).
	Points int `json:"points"`
	// SystematicRuns ran one fault each; SkippedByReduction are the points
	// not run because an equivalent one landed; CombinationRuns ran two or
	// three faults; ShrinkRuns and RepeatRuns shrank and re-ran findings.
	SystematicRuns     int `json:"systematic_runs"`
	SkippedByReduction int `json:"skipped_by_reduction"`
	CombinationRuns    int `json:"combination_runs"`
	ShrinkRuns         int `json:"shrink_runs"`
	RepeatRuns         int `json:"repeat_runs"`
	// ResumedRuns are the runs above an earlier search made (--state).
	ResumedRuns int `json:"resumed_runs,omitempty"`
	// NotLanded counts the search's runs whose faults never fired, or
	// fired and could not have their effect: none of them counts as a
	// scenario that passed.
	NotLanded int `json:"not_landed"`
	// Unreached are the fault families with points the search never ran.
	Unreached []string          `json:"unreached_families,omitempty"`
	Coverage  []ExploreCoverage `json:"coverage"`
	Found     []ExploreFinding  `json:"found"`
}

// ExploreCoverage is what the search did with one fault family's points on
// one method.
type ExploreCoverage struct {
	Family    string `json:"family"`
	Method    string `json:"method"`
	Points    int    `json:"points"`
	Run       int    `json:"run"`
	Skipped   int    `json:"skipped"`
	NotLanded int    `json:"not_landed"`
	Found     int    `json:"found"`
}

// ExploreFinding is one group of findings of one signature, shrunk.
type ExploreFinding struct {
	Signature string `json:"signature"`
	// Scenario names the report's scenario that holds its findings.
	Scenario string `json:"scenario"`
	// First is the plan (--fault specs) of the run that found it first;
	// Minimal the smallest that reproduced it, SkipTools the tools its
	// workload did without.
	First     []string `json:"first"`
	Minimal   []string `json:"minimal"`
	SkipTools []string `json:"skip_tools,omitempty"`
	// FoundAfterMS is how long into the search it was first found, and
	// FoundBy by how many of the search's runs.
	FoundAfterMS int64 `json:"found_after_ms"`
	FoundBy      int   `json:"found_by"`
	// Reproduced of Tries re-runs of Minimal found it again; 0 of Tries
	// is a finding seen once, reported with its first plan.
	Reproduced int `json:"reproduced"`
	Tries      int `json:"tries"`
	ShrinkRuns int `json:"shrink_runs"`
	// ShrinkCut says the budget ended shrinking before it was done.
	ShrinkCut bool `json:"shrink_cut,omitempty"`
}

// ExploreMatrix is the matrix a sharded search's Shard names: the fault
// space is dealt by equivalence class, not by scenario.
var ExploreMatrix = []string{"explore"}

// mergeExplore joins the explore sections of every shard of one search:
// counts add up, coverage rows of one family and method add up, a family is
// unreached if no shard reached it, and a signature two shards found is kept
// once, as the first shard that found it shrank it (its scenario and
// findings; the other's are dropped).
func mergeExplore(out *Report, rs []*Report) {
	x := &Exploration{Coverage: []ExploreCoverage{}, Found: []ExploreFinding{}}
	unreached := map[string]int{}
	rows := map[[2]string]int{}
	found := map[string]bool{}
	drop := map[string]bool{}
	for _, r := range rs {
		e := r.Explore
		if e == nil {
			continue
		}
		x.BudgetMS = max(x.BudgetMS, e.BudgetMS)
		x.ElapsedMS = max(x.ElapsedMS, e.ElapsedMS)
		x.BudgetEnded = x.BudgetEnded || e.BudgetEnded
		x.Points += e.Points
		x.SystematicRuns += e.SystematicRuns
		x.SkippedByReduction += e.SkippedByReduction
		x.CombinationRuns += e.CombinationRuns
		x.ShrinkRuns += e.ShrinkRuns
		x.RepeatRuns += e.RepeatRuns
		x.NotLanded += e.NotLanded
		x.ResumedRuns += e.ResumedRuns
		for _, f := range e.Unreached {
			unreached[f]++
		}
		for _, c := range e.Coverage {
			k := [2]string{c.Family, c.Method}
			i, ok := rows[k]
			if !ok {
				rows[k] = len(x.Coverage)
				x.Coverage = append(x.Coverage, c)
				continue
			}
			t := &x.Coverage[i]
			t.Points += c.Points
			t.Run += c.Run
			t.Skipped += c.Skipped
			t.NotLanded += c.NotLanded
			t.Found += c.Found
		}
		for _, f := range e.Found {
			if found[f.Signature] {
				drop[f.Scenario] = true
				continue
			}
			found[f.Signature] = true
			x.Found = append(x.Found, f)
		}
	}
	for f, n := range unreached {
		if n == len(rs) {
			x.Unreached = append(x.Unreached, f)
		}
	}
	slices.Sort(x.Unreached)
	slices.SortStableFunc(x.Coverage, func(a, b ExploreCoverage) int {
		return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.Method, b.Method))
	})
	for _, f := range x.Found {
		delete(drop, f.Scenario) // a scenario another signature kept
	}
	out.Scenarios = slices.DeleteFunc(out.Scenarios, func(s ScenarioResult) bool { return drop[s.Name] })
	out.Findings = slices.DeleteFunc(out.Findings, func(f Finding) bool { return drop[f.Scenario] })
	out.Explore = x
}

// exploreLines are what a search did and found, a line each, for the text
// summary and Markdown.
func (x *Exploration) lines() []string {
	out := []string{fmt.Sprintf("explored %d fault %s in %s of a %s budget: %d run one fault each, %d skipped as equivalent to one that landed (dynamic reduction), %d %s of two or three faults; %d of the search's runs did not land",
		x.Points, words.Plural(x.Points, "point", "points"), words.Duration(x.ElapsedMS*1000), words.Duration(x.BudgetMS*1000),
		x.SystematicRuns, x.SkippedByReduction, x.CombinationRuns, words.Plural(x.CombinationRuns, "combination", "combinations"), x.NotLanded)}
	if x.ResumedRuns > 0 {
		out = append(out, fmt.Sprintf("%d of these runs were an earlier search's, resumed from its state", x.ResumedRuns))
	}
	if left := x.Points - x.SystematicRuns - x.SkippedByReduction; x.BudgetEnded && left > 0 {
		out = append(out, fmt.Sprintf("the budget ended the search with %d %s not run", left, words.Plural(left, "point", "points")))
	}
	if len(x.Unreached) > 0 {
		out = append(out, "families not reached: "+strings.Join(x.Unreached, ", "))
	}
	for _, f := range x.Found {
		line := fmt.Sprintf("found %s after %s", f.Signature, words.Duration(f.FoundAfterMS*1000))
		switch {
		case f.Reproduced == 0:
			line += fmt.Sprintf(", once: not again in %d re-runs, reported with the plan that found it", f.Tries)
		default:
			line += fmt.Sprintf(", shrunk from %d to %d %s in %d runs, reproduced %d of %d",
				len(f.First), len(f.Minimal), words.Plural(len(f.Minimal), "fault", "faults"), f.ShrinkRuns, f.Reproduced, f.Tries)
		}
		if f.ShrinkCut {
			line += " (the budget ended shrinking)"
		}
		out = append(out, line)
	}
	return out
}

// writeCoverage writes the coverage table: fault family by method.
func (x *Exploration) coverageTable(row func(cells ...string) string) string {
	var b strings.Builder
	b.WriteString(row("family", "method", "points", "run", "skipped", "not landed", "found"))
	for _, c := range x.Coverage {
		b.WriteString(row(c.Family, c.Method, fmt.Sprint(c.Points), fmt.Sprint(c.Run), fmt.Sprint(c.Skipped), fmt.Sprint(c.NotLanded), fmt.Sprint(c.Found)))
	}
	return b.String()
}
