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

// A server of the stateful era that dies of server/discover (issue 40; FastMCP
// of mcp 1.6.0 does): the default era's baseline finds it, with its crash
// signature and the request that killed it, and the matrix goes on in the
// stateful era with a fresh server, where the probe's request of a method no
// revision defines kills it again. Its fixed twin answers -32601 and passes.
func TestDiesOnDiscover(t *testing.T) {
	bin := filepath.Join(examplesDir, "dies-on-discover")
	burst, err := faults.SelectScenarios(faults.ServerScenarios(), []string{"burst-c2s"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, args ...string) *reports.Report {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		report, err := Run(ctx, Options{Command: append([]string{bin}, args...), Scenarios: burst,
			Seed: 1, Deadline: 2 * time.Second, Grace: time.Second, TranscriptDir: t.TempDir(),
			Repro:         func(sc string, seed uint64) string { return "default " + sc },
			StatefulRepro: func(sc string, seed uint64) string { return "stateful " + sc }})
		if err != nil {
			t.Fatalf("err = %v; want a report", err)
		}
		return report
	}
	t.Run("buggy", func(t *testing.T) {
		report := run(t)
		type got struct{ Kind, Signature, Method, Repro string }
		var gots []got
		for _, f := range report.Findings {
			g := got{Kind: f.Kind, Signature: f.Signature, Repro: f.Repro}
			if f.Request != nil {
				g.Method = f.Request.Method
			}
			gots = append(gots, g)
		}
		want := []got{
			{reports.KindLostResponse, "", "server/discover", "default baseline"},
			{reports.KindCrash, "go:panic", "", "default baseline"},
			{reports.KindLostResponse, "", "mcpchaos/no-such-method", "stateful baseline"},
			{reports.KindCrash, "go:panic", "", "stateful baseline"},
		}
		if diff := cmp.Diff(want, gots); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
		b := report.Baseline
		if b.Outcome != reports.OutcomeFail || b.Findings != 4 {
			t.Errorf("baseline: %s with %d findings, want fail with 4", b.Outcome, b.Findings)
		}
		if !slices.ContainsFunc(b.Notes, func(n string) bool {
			return strings.HasPrefix(n, "server/discover, the first request of a client of the 2026-07-28 revision, killed the server")
		}) {
			t.Errorf("no note of the baseline's is about server/discover: %q", b.Notes)
		}
		if len(b.Transcripts) != 2 || filepath.Base(b.Transcripts[0]) != "baseline-discover.jsonl" || b.Transcripts[1] != b.Transcript {
			t.Errorf("transcripts %q (first %q), want the discover run's and the baseline's", b.Transcripts, b.Transcript)
		}
		if len(report.Scenarios) != 1 || report.Scenarios[0].Outcome == reports.OutcomeFail && report.Scenarios[0].Findings == 0 {
			t.Errorf("the matrix did not go on: %+v", report.Scenarios)
		}
		if report.Outcome != reports.OutcomeFail {
			t.Errorf("outcome %s, want fail", report.Outcome)
		}
	})
	t.Run("fixed", func(t *testing.T) {
		report := run(t, "--fixed")
		if report.Outcome != reports.OutcomePass || len(report.Findings) != 0 {
			t.Errorf("outcome %s with %d findings, want pass with none", report.Outcome, len(report.Findings))
		}
		for _, n := range report.Baseline.Notes {
			if strings.Contains(n, "server/discover") {
				t.Errorf("a note about server/discover on the fixed twin: %q", n)
			}
		}
	})
}

// explore's search starts from the same baseline: in the stateful era, with
// the discover run's findings among the baseline's.
func TestTrialsAfterDiscover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	trials, err := NewTrials(ctx, Options{Command: []string{filepath.Join(examplesDir, "dies-on-discover")}, Seed: 1,
		Deadline: 2 * time.Second, Grace: time.Second})
	if err != nil {
		t.Fatalf("err = %v; want a search", err)
	}
	base := trials.Baseline()
	var discover int
	for _, f := range base.Findings {
		if f.Request != nil && f.Request.Method == "server/discover" {
			discover++
		}
	}
	if discover != 1 || base.Result.Outcome != reports.OutcomeFail {
		t.Errorf("baseline %s with %d findings about server/discover, want fail with 1: %+v", base.Result.Outcome, discover, base.Findings)
	}
	for _, m := range trials.Messages() {
		if m.Method == "server/discover" {
			t.Errorf("the fault points hold server/discover: they are the discover run's, not the stateful era's")
			break
		}
	}
}
