package suite

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// The planted servers whose bug needs a fault point no scenario holds, the
// targets of mcpchaos explore: the default matrix misses the bug (the buggy
// twin passes it), and the --fault that reaches the point finds the crash on
// the buggy twin and nothing on the fixed one.
func TestPlantedBugsBeyondTheDefaultMatrix(t *testing.T) {
	for _, tc := range []struct {
		example, fault string
	}{
		// A repeated notifications/initialized: the session state
		// machine panics on a transition it does not know.
		{"initialized-twice", "duplicate:on=c2s:notification:notifications/initialized"},
		// The client's roots/list answer arrives twice: the second finds
		// no request pending under its id, and the server panics.
		{"double-answer", "duplicate:on=c2s:response:roots/list"},
	} {
		flags, err := faults.FaultFlagsScenario([]string{tc.fault})
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range []struct {
			name      string
			fixed     bool
			scenarios []faults.Scenario
			want      []verdict
		}{
			{"default-matrix", false, faults.ServerScenarios(), nil},
			{"fault", false, []faults.Scenario{flags}, []verdict{{faults.FaultFlagsName, "crash", "error", "go:panic", ""}}},
			{"fault/fixed", true, []faults.Scenario{flags}, nil},
		} {
			command := []string{filepath.Join(examplesDir, tc.example)}
			if run.fixed {
				command = append(command, "--fixed")
			}
			t.Run(tc.example+"/"+run.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				dir := t.TempDir()
				report, err := Run(ctx, Options{
					Command: command, Scenarios: run.scenarios, Seed: 1,
					Deadline: 2 * time.Second, Grace: 2 * time.Second, Parallel: 2, TranscriptDir: dir,
				})
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				got := verdicts(report.Findings)
				if run.want != nil {
					// The requests the probe had sent when the server
					// died are lost with it: how many is timing.
					got = slices.DeleteFunc(got, func(v verdict) bool { return v.Kind == "lost-response" })
				}
				if diff := cmp.Diff(run.want, got); diff != "" {
					var b strings.Builder
					reports.WriteSummary(&b, report)
					t.Errorf("findings (-want +got):\n%s\n%s", diff, b.String())
				}
				wantOutcome := reports.OutcomePass
				if run.want != nil {
					wantOutcome = reports.OutcomeFail
				}
				if report.Outcome != wantOutcome {
					t.Errorf("outcome %s, want %s", report.Outcome, wantOutcome)
				}
				for _, s := range report.Scenarios {
					// The fixed twin passes because the fault fired
					// and it coped, not because the moment never came.
					if s.Name == faults.FaultFlagsName && s.Outcome != wantOutcome {
						t.Errorf("%s: outcome %s %q, want %s", s.Name, s.Outcome, s.Indeterminate, wantOutcome)
					}
				}
				if report.Baseline == nil || report.Baseline.Outcome != reports.OutcomePass {
					t.Errorf("baseline %+v, want a pass", report.Baseline)
				}
				if diff := cmp.Diff(verdicts(report.Findings), verdicts(judgeDir(t, dir))); diff != "" {
					t.Errorf("judging the stored transcripts again (-live +offline):\n%s", diff)
				}
			})
		}
	}
}
