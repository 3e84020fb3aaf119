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

// stubbornCrash is the planted crash server behind a shell that outlives it
// and ignores SIGTERM: without any fault, the target needs SIGKILL to stop
// (a zombie, in the baseline and in every scenario), and under eof-inflight
// it also panics.
func stubbornCrash() []string {
	return []string{"sh", "-c", `trap "" TERM; "$0"; sleep 30`, filepath.Join(examplesDir, "crash")}
}

// A baseline finding never hides the rest (issue 9): the fault scenarios
// still run, each reports only what differs from the baseline, and the run
// fails (exit 1), not errors (exit 2).
func TestBaselineFindingsDoNotHideTheScenarios(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	report, err := Run(ctx, Options{
		Command:   stubbornCrash(),
		Scenarios: faults.ServerScenarios(),
		Seed:      1,
		Deadline:  2 * time.Second,
		Grace:     300 * time.Millisecond,
		Parallel:  3,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var b strings.Builder
	reports.WriteSummary(&b, report)
	got := summarize(report.Findings)
	want := []found{
		{"baseline", "zombie", ""},
		{"eof-inflight", "crash", "go:panic"},
	}
	// eof-inflight's lost answers and the other scenarios' outcomes depend
	// on the crash server's timing, as in TestDefaultMatrixFindsEveryPlantedBug;
	// what matters here is that none repeats the baseline's zombie.
	got = slices.DeleteFunc(got, func(f found) bool {
		return f.Scenario != "baseline" && f.Kind != "zombie" && !(f.Scenario == "eof-inflight" && f.Kind == "crash")
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", diff, b.String())
	}
	if report.Outcome != reports.OutcomeFail || report.ExitCode(false) != 1 {
		t.Errorf("outcome %s, exit %d; want fail, 1", report.Outcome, report.ExitCode(false))
	}
	if len(report.Scenarios) != len(faults.ServerScenarios()) {
		t.Errorf("%d scenarios ran, want all %d", len(report.Scenarios), len(faults.ServerScenarios()))
	}
	for _, s := range report.Scenarios {
		if s.Outcome == reports.OutcomeIndeterminate {
			continue // eof-server-request: the crash server asks the client nothing
		}
		if !strings.Contains(strings.Join(s.Notes, "\n"), "as in the baseline") {
			t.Errorf("scenario %s: notes %q, want one saying a finding was left to the baseline", s.Name, s.Notes)
		}
	}
	if !strings.Contains(b.String(), "the target fails without faults") {
		t.Errorf("the summary does not say the target fails without faults:\n%s", b.String())
	}
}

// The repro line of a baseline finding selects the scenario "baseline",
// which runs the baseline alone.
func TestScenarioBaselineRunsTheBaselineAlone(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	report, err := Run(ctx, Options{
		Command:   stubbornCrash(),
		Scenarios: []faults.Scenario{faults.Baseline},
		Seed:      1,
		Grace:     300 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]found{{"baseline", "zombie", ""}}, summarize(report.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(report.Scenarios) != 0 {
		t.Errorf("scenarios ran besides the baseline: %+v", report.Scenarios)
	}
	if f := report.Findings[0]; f.Rule != reports.RuleShutdownSIGKILL || f.Severity != reports.SeverityError {
		t.Errorf("the zombie cites %s (%s), want %s, an error", f.Rule, f.Severity, reports.RuleShutdownSIGKILL)
	}
}
