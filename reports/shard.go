package reports

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Shard says which slice of a run's matrix a report holds (--shard K/N):
// the run is known by Run, a digest of what every shard of it must share
// (seed, target, the whole matrix, N), so that reports of different runs
// are never merged.
type Shard struct {
	Index int    `json:"index"`
	Total int    `json:"total"`
	Run   string `json:"run"`
	// Matrix is the whole matrix, every shard's scenarios, in order.
	Matrix []string `json:"matrix"`
}

// ShardRun is the run digest of a sharded matrix.
func ShardRun(seed uint64, target Target, matrix []string, total int) string {
	h := sha256.New()
	fmt.Fprintf(h, "seed %d\ntotal %d\nurl %s\n", seed, total, target.URL)
	for _, a := range target.Command {
		fmt.Fprintf(h, "arg %q\n", a)
	}
	for _, s := range matrix {
		fmt.Fprintf(h, "scenario %q\n", s)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// InShard reports whether the i-th scenario of a matrix belongs to shard
// index of total: scenarios are dealt round-robin, so every shard gets a
// like share of the default matrix's slow and fast scenarios.
func InShard(i, index, total int) bool { return i%total == index-1 }

// MergeShards joins the reports of every shard of one run into the report
// the unsharded run would have written: the baseline (every shard runs it)
// from the first shard, with its findings once, and each shard's
// scenarios and findings, in the matrix's order. Reports of different
// runs, a report that is not a shard, a shard given twice and a missing
// shard are errors that name the file.
func MergeShards(files []string, rs []*Report) (*Report, error) {
	if len(rs) == 0 {
		return nil, fmt.Errorf("no reports to merge")
	}
	first := rs[0].Shard
	if first == nil {
		return nil, fmt.Errorf("%s is not a shard's report (it was not run with --shard K/N)", files[0])
	}
	seen := map[int]string{}
	for i, r := range rs {
		s := r.Shard
		switch {
		case s == nil:
			return nil, fmt.Errorf("%s is not a shard's report (it was not run with --shard K/N)", files[i])
		case s.Run != first.Run:
			return nil, fmt.Errorf("%s is shard %d/%d of another run than %s (run %s, not %s): shards of one run share the seed, the target and the matrix", files[i], s.Index, s.Total, files[0], s.Run, first.Run)
		case seen[s.Index] != "":
			return nil, fmt.Errorf("%s and %s are both shard %d/%d", seen[s.Index], files[i], s.Index, s.Total)
		}
		seen[s.Index] = files[i]
	}
	var missing []string
	for k := 1; k <= first.Total; k++ {
		if seen[k] == "" {
			missing = append(missing, fmt.Sprintf("%d/%d", k, first.Total))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shard %s of run %s missing: merge every shard's report", strings.Join(missing, ", "), first.Run)
	}
	out := &Report{Schema: Schema, Tool: rs[0].Tool, Target: rs[0].Target, Seed: rs[0].Seed, Baseline: rs[0].Baseline, Error: rs[0].Error}
	order := map[string]int{}
	for i, name := range first.Matrix {
		order[name] = i
	}
	baseName := ""
	if out.Baseline != nil {
		baseName = out.Baseline.Name
	}
	for i, r := range rs {
		out.Scenarios = append(out.Scenarios, r.Scenarios...)
		for _, f := range r.Findings {
			if f.Scenario == baseName && baseName != "" && i > 0 {
				continue // every shard ran the baseline: its findings once
			}
			out.Findings = append(out.Findings, f)
		}
		for _, fp := range r.StaleBaseline {
			if !slices.Contains(out.StaleBaseline, fp) {
				out.StaleBaseline = append(out.StaleBaseline, fp)
			}
		}
		out.BaselineFile = cmp.Or(out.BaselineFile, r.BaselineFile)
		if r.Outcome == OutcomeError && out.Error == "" {
			out.Error = fmt.Sprintf("shard %d/%d: %s", r.Shard.Index, r.Shard.Total, r.Error)
		}
	}
	if rs[0].Explore != nil {
		mergeExplore(out, rs)
	}
	slices.SortStableFunc(out.Scenarios, func(a, b ScenarioResult) int { return order[a.Name] - order[b.Name] })
	slices.SortStableFunc(out.Findings, func(a, b Finding) int {
		return scenarioRank(order, a.Scenario, baseName) - scenarioRank(order, b.Scenario, baseName)
	})
	out.Outcome = OutcomePass
	switch {
	case out.Error != "":
		out.Outcome = OutcomeError
	case Failing(out.Findings) || len(out.StaleBaseline) > 0:
		out.Outcome = OutcomeFail
	}
	return out, nil
}

// scenarioRank orders findings: the baseline's first, then the matrix's.
func scenarioRank(order map[string]int, name, baseline string) int {
	if name == baseline {
		return -1
	}
	return order[name]
}
