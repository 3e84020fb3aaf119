package suite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// The planted servers of issue 40, each found where its doc says, and each
// fixed twin clean.
func TestPlantedHostileInput(t *testing.T) {
	hostile, err := faults.SelectScenarios(faults.PresetsFor(faults.ForServer), []string{"hostile-input"})
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ Scenario, Rule, Signature string }
	for _, tc := range []struct {
		name string
		want []got
		// anyScenario says the run that finds it does not matter: the
		// growth series runs in the baseline and in hostile-input, and a
		// loaded machine's noise can hide the jump from one (CI19: the
		// baseline's, hostile-input found it).
		anyScenario bool
	}{
		{"unvalidated-input", []got{{"baseline", reports.RuleInputNotValidated, ""}}, false},
		{"backtracking-template", []got{{"baseline", reports.RuleCostGrowsWithInput, ""}}, true},
		{"listed-not-found", []got{{"baseline", reports.RuleListedNotFound, ""}}, false},
		{"null-params", []got{{"hostile-input", reports.RuleLostResponse, ""}, {"hostile-input", reports.RuleCrashSignature, "go:panic"}}, false},
	} {
		for _, fixed := range []bool{false, true} {
			name := tc.name
			args := []string{filepath.Join(examplesDir, tc.name)}
			want := tc.want
			if fixed {
				name += " --fixed"
				args = append(args, "--fixed")
				want = nil
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				report, err := Run(ctx, Options{Command: args, Scenarios: hostile, Seed: 1, Deadline: 2 * time.Second, Grace: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				var gots []got
				for _, f := range report.Findings {
					g := got{f.Scenario, f.Rule, f.Signature}
					if tc.anyScenario && f.Scenario == "hostile-input" {
						g.Scenario = "baseline"
					}
					gots = append(gots, g)
				}
				if diff := cmp.Diff(want, gots); diff != "" {
					t.Errorf("findings (-want +got):\n%s", diff)
				}
			})
		}
	}
}
