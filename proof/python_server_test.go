package proof

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
	"github.com/mcpchaos/mcpchaos/wire"
)

// found is a finding as a proof pins it: where, what, and for a crash the
// signature the judge read on stderr.
type found struct {
	Scenario, Kind, Signature string
}

// wantFindings fails t unless the report's findings are want, showing the
// run's summary, which it returns for the test's other messages.
func wantFindings(t *testing.T, report *reports.Report, want []found) string {
	t.Helper()
	var b strings.Builder
	reports.WriteSummary(&b, report)
	if diff := cmp.Diff(want, summarize(report.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", diff, b.String())
	}
	return b.String()
}

// wantIndeterminate fails t unless the scenarios that could not fire are
// want, apart from those named in maybe, which may go either way: a
// scenario that waits for three calls in flight together against tools
// that answer at once. summary is the run's, for the message.
func wantIndeterminate(t *testing.T, report *reports.Report, summary string, want []string, maybe ...string) {
	t.Helper()
	var got []string
	for _, sc := range report.Scenarios {
		if sc.Outcome == reports.OutcomeIndeterminate && !slices.Contains(maybe, sc.Name) {
			got = append(got, sc.Name)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("indeterminate scenarios (-want +got):\n%s\n%s", diff, summary)
	}
}

// wantSaid fails t for each finding of kind whose message does not say
// text: what a finding tells its reader is asserted, not only its kind.
func wantSaid(t *testing.T, report *reports.Report, kind, text string) {
	t.Helper()
	for _, f := range report.Findings {
		if f.Kind == kind && !strings.Contains(f.Message, text) {
			t.Errorf("%s: the %s finding does not say %q: %s", f.Scenario, kind, text, f.Message)
		}
	}
}

func summarize(fs []reports.Finding) []found {
	out := []found{}
	for _, f := range fs {
		out = append(out, found{f.Scenario, f.Kind, f.Signature})
	}
	slices.SortFunc(out, func(a, b found) int {
		return strings.Compare(a.Scenario+"\x00"+a.Kind+"\x00"+a.Signature, b.Scenario+"\x00"+b.Kind+"\x00"+b.Signature)
	})
	return out
}

const (
	crashClosed = "python:ClosedResourceError"
	crashDict   = "python:RuntimeError:dictionary changed size during iteration"
)

// python-sdk issue #526, fixed in mcp 1.27.0 by PR #2306: when stdin reaches
// EOF with handlers in flight, mcp 1.26.0's Server.run() waits for them instead
// of cancelling them, and each answers into the write stream the session had
// already closed (anyio.ClosedResourceError in nested ExceptionGroups); with
// two handlers blocked on a server-to-client request (roots/list) the
// session's receive loop also dies iterating the dict of pending requests that
// the woken handlers shrink (RuntimeError: dictionary changed size during
// iteration). 1.27.0 cancels the handlers, iterates a copy of the dict and
// drops answers to a closed stream: it exits with status 0.
//
// 1.27.0 is not finding-free: the handlers it cancels never answer, and the
// judge reports those calls as lost-response, a warning because the server's
// stdin had closed (README, Verdicts). 1.26.0 gets the same warning. The
// crashes are what the fix removed, and with them every error: mcpchaos test
// exits 1 on 1.26.0 and 0 on 1.27.0.
func TestPythonSDK526_EOFWithHandlersInFlight_1_26_crashes_1_27_does_not(t *testing.T) {
	root := repoRoot(t)
	server := filepath.Join(root, "examples", "python", "servers", "eof_server.py")
	// eof-inflight with the roots tool included: the EOF follows the third
	// call at once, and the RuntimeError needs both roots handlers to have
	// sent roots/list before the server's reader thread reports the EOF.
	// They always had on an idle machine; with four busy loops on the two
	// cores the RuntimeError was missing in about 1 run in 30 (the
	// ClosedResourceError never was). eof-server-request has no such race:
	// the server pairs its roots calls before asking (see eof_server.py).
	maybeDict := found{"eof-inflight", "crash", crashDict}
	for _, tc := range []struct {
		name string
		sdk  string // the environment under .sdk/
		// skipTools leaves the roots tool out, so that only handlers that
		// never ask the client anything are in flight: the first race alone.
		skipTools []string
		scenarios []string
		want      []found
		maybe     []found // timing decides, not the SDK (see above)
		// exit is the server's exit status in every scenario.
		exit int
		// failing says the report has findings of severity error, so that
		// mcpchaos test exits 1; without them (warnings only) it exits 0.
		failing bool
	}{
		{
			name: "1.26.0/sleeping handlers", sdk: "py-mcp-1.26.0",
			skipTools: []string{"roots"}, scenarios: []string{"eof-inflight"},
			want: []found{
				{"eof-inflight", "crash", crashClosed},
				{"eof-inflight", "lost-response", ""},
			},
			exit: 1, failing: true,
		},
		{
			name: "1.26.0/handlers blocked on roots/list", sdk: "py-mcp-1.26.0",
			scenarios: []string{"eof-inflight", "eof-server-request"},
			want: []found{
				{"eof-inflight", "crash", crashClosed},
				{"eof-inflight", "lost-response", ""},
				{"eof-server-request", "crash", crashClosed},
				{"eof-server-request", "crash", crashDict},
				{"eof-server-request", "lost-response", ""},
			},
			maybe: []found{maybeDict},
			exit:  1, failing: true,
		},
		{
			name: "1.27.0/sleeping handlers", sdk: "py-mcp-1.27.0",
			skipTools: []string{"roots"}, scenarios: []string{"eof-inflight"},
			want: []found{{"eof-inflight", "lost-response", ""}},
			exit: 0,
		},
		{
			name: "1.27.0/handlers blocked on roots/list", sdk: "py-mcp-1.27.0",
			scenarios: []string{"eof-inflight", "eof-server-request"},
			want: []found{
				{"eof-inflight", "lost-response", ""},
				{"eof-server-request", "lost-response", ""},
			},
			exit: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			python := sdkPython(t, root, tc.sdk)
			scenarios, err := faults.SelectScenarios(faults.ServerScenarios(), tc.scenarios)
			if err != nil {
				t.Fatal(err)
			}
			command := []string{python, server}
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			report, err := suite.Run(ctx, suite.Options{
				Command:   command,
				Scenarios: scenarios,
				Seed:      1,
				// Generous: the servers answer or exit within about a second
				// of the fault, so these cost nothing when all goes well, and
				// on a loaded machine (go test runs packages in parallel) a
				// Python start-up of several seconds must not read as a hang
				// or a zombie.
				Deadline:      10 * time.Second,
				Grace:         10 * time.Second,
				TranscriptDir: dir,
				Probe:         probe.Config{SkipTools: tc.skipTools},
				Repro: func(s string, seed uint64) string {
					skip := ""
					for _, tool := range tc.skipTools {
						skip += " --skip-tool " + tool
					}
					return fmt.Sprintf("mcpchaos test --scenario %s --seed %d%s -- %s", s, seed, skip, suite.ShellQuote(command))
				},
			})
			if err != nil {
				var setup *suite.SetupError
				if errors.As(err, &setup) {
					t.Fatalf("suite.Run: %v\nserver stderr:\n%s", err, strings.Join(setup.Stderr, "\n"))
				}
				t.Fatalf("suite.Run: %v", err)
			}
			if report.Outcome == "error" {
				var b strings.Builder
				reports.WriteSummary(&b, report)
				t.Fatalf("the server failed its no-fault baseline, so no scenario ran:\n%s", b.String())
			}
			t.Logf("%s %v: verdict in %s (baseline %dms, %s)", tc.sdk, tc.scenarios, time.Since(start).Round(time.Millisecond),
				report.Baseline.DurationMS, scenarioTimes(report))

			got := summarize(report.Findings)
			var extras []found
			got = slices.DeleteFunc(got, func(f found) bool {
				if slices.Contains(tc.maybe, f) {
					extras = append(extras, f)
					return true
				}
				return false
			})
			if len(tc.maybe) > 0 {
				t.Logf("timing-dependent findings: %d of %d present %v", len(extras), len(tc.maybe), extras)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				var b strings.Builder
				reports.WriteSummary(&b, report)
				t.Errorf("findings (-want +got):\n%s\n%s", diff, b.String())
			}
			errs := 0
			for _, f := range report.Findings {
				if f.Severity == reports.SeverityError {
					errs++
				}
			}
			if failing := errs > 0; failing != tc.failing {
				t.Errorf("%d findings of severity error, want failing=%v (mcpchaos test exits 1 on any)", errs, tc.failing)
			}
			for _, sc := range tc.scenarios {
				if got := exitStatus(t, filepath.Join(dir, sc+".jsonl")); got != fmt.Sprint(tc.exit) {
					t.Errorf("%s: the server ended with %s, want exit status %d", sc, got, tc.exit)
				}
			}
		})
	}
}

// repoRoot is the module root: go test runs in the package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// sdkPython is the interpreter of an environment that scripts/install-sdks
// makes. A missing one fails the proof: skipped, it would prove nothing.
func sdkPython(t *testing.T, root, env string) string {
	t.Helper()
	python := filepath.Join(root, ".sdk", env, "bin", "python")
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("%s is missing (%v): run scripts/install-sdks first; it installs the pinned SDK releases this proof runs against", python, err)
	}
	return python
}

func scenarioTimes(r *reports.Report) string {
	var parts []string
	for _, s := range r.Scenarios {
		parts = append(parts, fmt.Sprintf("%s %dms", s.Name, s.DurationMS))
	}
	return strings.Join(parts, ", ")
}

// exitStatus reads how the server ended from a stored transcript: "0", "1",
// or the signal's name.
func exitStatus(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	status := "no process-exited event"
	err = wire.ReadTranscript(f, func(e wire.Event) error {
		if e.Type == wire.EventProcessExited {
			switch {
			case e.ExitCode != nil:
				status = fmt.Sprint(*e.ExitCode)
			case e.Signal != "":
				status = "signal " + e.Signal
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return status
}
