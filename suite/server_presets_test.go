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

// verdict is one finding as these tests pin it: where, what, how bad, the
// crash signature, and the method of the request it is about.
type verdict struct {
	Scenario, Kind, Severity, Signature, Method string
}

func verdicts(fs []reports.Finding) []verdict {
	var out []verdict
	for _, f := range fs {
		v := verdict{f.Scenario, f.Kind, f.Severity, f.Signature, ""}
		if f.Request != nil {
			v.Method = f.Request.Method
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b verdict) int {
		return strings.Compare(strings.Join([]string{a.Scenario, a.Kind, a.Severity, a.Signature, a.Method}, "\x00"),
			strings.Join([]string{b.Scenario, b.Kind, b.Severity, b.Signature, b.Method}, "\x00"))
	})
	return out
}

// The built-in server scenarios beyond the default matrix find the planted
// bug they were made for, by name, with nothing else; the fixed twin passes
// every one of them, and the buggy one passes the presets that do not touch
// its bug (no false alarm).
func TestExtraServerPresetsFindTheirPlantedBugs(t *testing.T) {
	for _, tc := range []struct {
		example string
		presets []string
		want    []verdict // sorted as verdicts sorts
		// maybe may or may not be found: which side of a race the server's
		// exit falls on decides, not the fault.
		maybe []verdict
	}{
		{"line-scanner", []string{"oversize-call", "malformed-line", "fragmented-call"}, []verdict{
			{"malformed-line", "crash", "error", "exit:1", ""},
			// The 1 MiB line kills the server after 64 KiB of it: the
			// relay's write of it fails, so the calls behind it never
			// reach the server and none is owed an answer.
			{"oversize-call", "crash", "error", "exit:1", ""},
		}, []verdict{
			// The two calls sent with the one the fault replaced are
			// lost when they reach the server's pipe before it exits
			// (almost always); when the relay's write comes a moment
			// late, it fails and nothing was owed.
			{"malformed-line", "lost-response", "error", "", "tools/call"},
		}},
		{"id-keyed", []string{"id-collision", "id-type"}, []verdict{
			// The call that took another's id is dropped as a
			// retransmission and never answered: a warning
			// (unanswered-reused-id), since the client reused the id first.
			{"id-collision", "hang", "warning", "", "tools/call"},
		}, nil},
		{"id-number", []string{"id-type", "id-collision"}, []verdict{
			// "2" answered as 2: an answer nobody asked for, and the call
			// left without its own.
			{"id-type", "lost-response", "warning", "", "tools/call"},
			{"id-type", "unknown-response", "error", "", ""},
		}, nil},
	} {
		scenarios, err := faults.SelectScenarios(faults.PresetsFor(faults.ForServer), tc.presets)
		if err != nil {
			t.Fatal(err)
		}
		for _, fixed := range []bool{false, true} {
			name, command, want := tc.example, []string{filepath.Join(examplesDir, tc.example)}, tc.want
			if fixed {
				name, command, want = name+"/fixed", append(command, "--fixed"), nil
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				dir := t.TempDir()
				report, err := Run(ctx, Options{
					Command: command, Scenarios: scenarios, Seed: 1,
					Deadline: 2 * time.Second, Grace: 2 * time.Second, Parallel: 3, TranscriptDir: dir,
				})
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				got := verdicts(report.Findings)
				if !fixed {
					got = slices.DeleteFunc(got, func(v verdict) bool { return slices.Contains(tc.maybe, v) })
				}
				if diff := cmp.Diff(want, got); diff != "" {
					var b strings.Builder
					reports.WriteSummary(&b, report)
					t.Errorf("findings (-want +got):\n%s\n%s", diff, b.String())
				}
				failed := map[string]bool{}
				for _, v := range want {
					// A warning alone (--strict aside) passes.
					failed[v.Scenario] = failed[v.Scenario] || v.Severity == reports.SeverityError
				}
				for _, s := range report.Scenarios {
					wantOutcome := reports.OutcomePass
					if failed[s.Name] {
						wantOutcome = reports.OutcomeFail
					}
					if s.Outcome != wantOutcome {
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
