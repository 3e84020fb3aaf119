package suite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// The planted servers of the server surface beyond tools (issue 29): each
// verdict of prompts, resources, logging, pagination and tasks is found on
// its buggy server, by the scenario that exposes it (the baseline when the
// bug needs no fault), with the rule named, and its fixed twin passes. The
// judge, run again on the stored transcripts, finds the same.
func TestPlantedSurfaceBugs(t *testing.T) {
	type rule struct{ Scenario, Rule string }
	for _, tc := range []struct {
		example   string
		scenarios []string
		want      []rule
		// notSent is what the buggy server's baseline could not send.
		notSent string
	}{
		{"lost-task", nil, []rule{{"baseline", reports.RuleTaskResultLost}}, ""},
		{"stuck-task", nil, []rule{{"baseline", reports.RuleTaskNeverFinished}}, "not sent: tasks/result (task task-1 was still working when the probe stopped polling it)"},
		{"evicting-task", nil, []rule{{"baseline", reports.RuleTaskForgotten}}, "not sent: tasks/result (tasks/get of task task-1 was not answered with its status)"},
		{"failed-completed", nil, []rule{{"baseline", reports.RuleTaskCompletedFailing}}, ""},
		{"shared-tasks", nil, []rule{{"baseline", reports.RuleTaskNotOwned}}, ""},
		{"chatty-log", nil, []rule{{"baseline", reports.RuleLogBelowLevel}}, ""},
		{"stray-update", nil, []rule{{"baseline", reports.RuleUpdateNotSubscribed}}, ""},
		{"looping-cursor", nil, []rule{{"baseline", reports.RuleListCursorRepeats}}, ""},
		// The cancellation that marks the completed task cancelled also
		// takes its result away: the client, which saw it completed, gets
		// an error from tasks/result.
		{"cancel-completed", []string{"cancel-task-race"}, []rule{
			{"cancel-task-race", reports.RuleTaskLeftTerminal},
			{"cancel-task-race", reports.RuleTaskResultLost},
		}, ""},
		{"task-zombie", []string{"eof-task"}, []rule{{"eof-task", reports.RuleShutdownSIGTERM}}, ""},
	} {
		for _, fixed := range []bool{false, true} {
			name, command, want := tc.example, []string{filepath.Join(examplesDir, tc.example)}, tc.want
			if fixed {
				name, command, want = name+"/fixed", append(command, "--fixed"), nil
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				scenarios := []faults.Scenario{faults.Baseline}
				if tc.scenarios != nil {
					var err error
					if scenarios, err = faults.ResolveScenarios(tc.scenarios, faults.PresetsFor(faults.ForServer)); err != nil {
						t.Fatal(err)
					}
				}
				dir := t.TempDir()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				report, err := Run(ctx, Options{
					Command: command, Scenarios: scenarios, Seed: 1,
					Deadline: 2 * time.Second, Grace: 2 * time.Second, TranscriptDir: dir,
					Repro: func(s string, seed uint64) string {
						return fmt.Sprintf("mcpchaos test --scenario %s --seed %d", s, seed)
					},
				})
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				var got []rule
				for _, f := range report.Findings {
					got = append(got, rule{f.Scenario, f.Rule})
				}
				slices.SortFunc(got, func(a, b rule) int { return strings.Compare(a.Scenario+a.Rule, b.Scenario+b.Rule) })
				slices.SortFunc(want, func(a, b rule) int { return strings.Compare(a.Scenario+a.Rule, b.Scenario+b.Rule) })
				if diff := cmp.Diff(want, got); diff != "" {
					var b strings.Builder
					reports.WriteSummary(&b, report)
					t.Errorf("findings (-want +got):\n%s\n%s", diff, b.String())
				}
				if diff := cmp.Diff(summarize(report.Findings), summarize(judgeDir(t, dir))); diff != "" {
					t.Errorf("judging the stored transcripts again (-live +offline):\n%s", diff)
				}
				// Every declared request was sent, the fixed twins' too,
				// or the note says why not.
				wantNot := tc.notSent
				if fixed {
					wantNot = ""
				}
				n := report.Baseline.Notes
				switch {
				case len(n) == 0 || !strings.Contains(n[0], "requests the server's capabilities make callable"):
					t.Errorf("baseline notes %q, want the coverage note first", n)
				case wantNot == "" && strings.Contains(n[0], "not sent"):
					t.Errorf("coverage note %q, want every request sent", n[0])
				case wantNot != "" && !strings.Contains(n[0], wantNot):
					t.Errorf("coverage note %q, want it to say %q", n[0], wantNot)
				}
			})
		}
	}
}
