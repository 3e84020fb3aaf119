package suite

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
)

// faults spells the judge's finding kinds for scenario files; they must be
// the judge's.
func TestFindingKindsAreTheJudges(t *testing.T) {
	want := []string{reports.KindHang, reports.KindCrash, reports.KindLostResponse, reports.KindDuplicateResponse,
		reports.KindUnknownResponse, reports.KindZombie, reports.KindProtocolViolation, reports.KindCrossSession, reports.KindSecurity}
	if diff := cmp.Diff(want, faults.FindingKinds); diff != "" {
		t.Errorf("faults.FindingKinds (-want +got):\n%s", diff)
	}
}

func TestApplyExpectation(t *testing.T) {
	crash := reports.Finding{Kind: "crash", Severity: reports.SeverityError}
	lost := reports.Finding{Kind: "lost-response", Severity: reports.SeverityWarning}
	hang := reports.Finding{Kind: "hang", Severity: reports.SeverityError}
	type got struct {
		Kinds    []string
		Expected []bool
		Failing  bool
	}
	for _, tc := range []struct {
		name     string
		expect   []string
		findings []reports.Finding
		want     got
	}{
		{"no expectation", nil, []reports.Finding{crash}, got{[]string{"crash"}, []bool{false}, true}},
		{"exactly the expected kinds", []string{"crash"}, []reports.Finding{crash, lost}, got{[]string{"crash", "lost-response"}, []bool{true, false}, false}},
		{"expected kinds in another order", []string{"hang", "crash"}, []reports.Finding{crash, hang}, got{[]string{"crash", "hang"}, []bool{true, true}, false}},
		{"a kind more", []string{"crash"}, []reports.Finding{crash, hang}, got{[]string{"crash", "hang", "expectation"}, []bool{false, false, false}, true}},
		{"the bug is gone", []string{"crash"}, nil, got{[]string{"expectation"}, []bool{false}, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judge.Verdict{Findings: slices.Clone(tc.findings)}
			ApplyExpectation(faults.Scenario{Name: "s", Findings: tc.expect}, 1, "repro", &v)
			g := got{Failing: reports.Failing(v.Findings)}
			for _, f := range v.Findings {
				g.Kinds = append(g.Kinds, f.Kind)
				g.Expected = append(g.Expected, f.Expected)
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A scenario from a file pinned to the crash example's bug passes: its
// findings are expected. The same scenario against the fixed twin fails:
// the bug it pins is gone. Its seed replaces the run's.
func TestExpectedFindingsAgainstPlantedBug(t *testing.T) {
	seed := uint64(77)
	sc := faults.Scenario{Name: "pinned", Faults: []string{"eof:on=c2s:request:tools/call,inflight=3"},
		Findings: []string{"crash"}, Seed: &seed, Deadline: 2 * time.Second, Workload: faults.Workload{Calls: 3, Concurrency: 3}}
	for _, tc := range []struct {
		command []string
		outcome string
	}{
		{[]string{filepath.Join(examplesDir, "crash")}, "pass"},
		{[]string{filepath.Join(examplesDir, "crash"), "--fixed"}, "fail"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		report, err := Run(ctx, Options{Command: tc.command, Scenarios: []faults.Scenario{sc}, Seed: 1, Deadline: time.Second, Grace: 2 * time.Second})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		s := report.Scenarios[0]
		if s.Outcome != tc.outcome || report.Outcome != tc.outcome || s.Seed != 77 {
			t.Errorf("%q: scenario %+v, report outcome %s; want %s with seed 77\nfindings: %+v", tc.command, s, report.Outcome, tc.outcome, report.Findings)
		}
	}
}

// A client program's failing run is saved as a case with the client, the
// server and the scenario's expectation; replayed, it fails the same way
// while the client deadlocks and passes once it does not.
func TestClientCaseRoundTrip(t *testing.T) {
	dir := t.TempDir()
	sc, err := faults.SelectScenarios(faults.ClientScenarios(), []string{"list-changed-mid-call"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(clientModeEnv, "deadlock-on-list-changed")
	o := ClientOptions{
		Client: []string{os.Args[0]}, Server: []string{mcpchaosBin, "serve"}, Self: []string{mcpchaosBin},
		Scenarios: sc, Seed: 4, Deadline: 3 * time.Second, HangAfter: 3 * time.Second, Grace: time.Second, CaseDir: dir,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := RunClient(ctx, o); err != nil {
		t.Fatal(err)
	}
	files, cases, err := ReadCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1 || filepath.Base(files[0]) != "list-changed-mid-call-seed4.yaml" {
		t.Fatalf("cases %q", files)
	}
	c := cases[0]
	if !slices.Equal(c.Server, o.Server) || !slices.Equal(c.Command, o.Client) || c.Scenario.Expect != "success" || !slices.Equal(c.Findings, []string{"hang"}) {
		t.Errorf("case = %+v", c)
	}

	// A server case directory is not replayed as client cases.
	if _, err := ReplayCases(ctx, Options{}, dir); err == nil || !strings.Contains(err.Error(), "a case of mcpchaos test-client; replay it with mcpchaos test-client --cases") {
		t.Errorf("ReplayCases of a client case: %v", err)
	}

	for _, tc := range []struct {
		mode   string
		status string
	}{
		{"deadlock-on-list-changed", CaseSame},
		{"well-behaved", CasePasses},
	} {
		t.Setenv(clientModeEnv, tc.mode)
		replay, err := ReplayClientCases(ctx, ClientOptions{Self: []string{mcpchaosBin}, Seed: 1, Deadline: 3 * time.Second, HangAfter: 3 * time.Second, Grace: time.Second}, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(replay.Cases) != 1 || replay.Cases[0].Status != tc.status || !replay.Cases[0].SameDecisions() {
			t.Errorf("%s: replay %+v, want status %s with the same decisions", tc.mode, replay.Cases, tc.status)
		}
	}
}
