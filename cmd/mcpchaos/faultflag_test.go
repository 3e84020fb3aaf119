package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
)

// --fault on test makes one scenario of the specs given, in place of the
// default matrix; its findings' repro line gives the same --fault flags, and
// running that line finds the same bug again.
func TestTestFaultFlags(t *testing.T) {
	buggy := crashServer(t)
	dir := t.TempDir()
	reportPath := filepath.Join(dir, "report.json")
	const spec = "eof:on=c2s:request:tools/call,inflight=3"
	var stdout, stderr bytes.Buffer
	args := []string{"test", "--seed", "5", "--deadline", "2s", "--fault", spec, "--report", reportPath, "--", buggy}
	if code := run(args, nil, &stdout, &stderr); code != exitFindings {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFindings, stdout.String(), stderr.String())
	}
	report := readReportFile(t, reportPath)
	var names []string
	for _, s := range report.Scenarios {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"fault-flags"}) {
		t.Errorf("scenarios run: %q, want only the --fault one", names)
	}
	if len(report.Findings) == 0 {
		t.Fatalf("no findings against the planted crash:\n%s", stdout.String())
	}
	repro := report.Findings[0].Repro
	want := "mcpchaos test --fault " + spec + " --seed 5 --deadline 2s -- " + buggy
	if repro != want {
		t.Fatalf("repro = %q\nwant    %q", repro, want)
	}

	// The repro line, run as it reads, finds the same kind of bug.
	again := filepath.Join(dir, "again.json")
	argv := strings.Fields(strings.TrimPrefix(repro, "mcpchaos "))
	argv = append([]string{argv[0], "--report", again}, argv[1:]...)
	if code := run(argv, nil, &bytes.Buffer{}, &stderr); code != exitFindings {
		t.Fatalf("repro exit %d, want %d; stderr %s", code, exitFindings, stderr.String())
	}
	if got := readReportFile(t, again); got.Findings[0].Kind != report.Findings[0].Kind || got.Findings[0].Signature != report.Findings[0].Signature {
		t.Errorf("the repro found %s %s, the run %s %s", got.Findings[0].Kind, got.Findings[0].Signature, report.Findings[0].Kind, report.Findings[0].Signature)
	}
}

func TestFaultFlagUsageErrors(t *testing.T) {
	checkUsageErrors(t, []usageCase{
		{"test", []string{"test", "--fault", "stal:for=1s", "--", "cat"}, `--fault: scenario fault-flags: fault "stal:for=1s": unknown fault "stal" (did you mean "stall"?)`},
		{"test-client", []string{"test-client", "--fault", "delay:for=soon", "--", "true"}, `fault "delay:for=soon": for:`},
	})
}

func readReportFile(t *testing.T, path string) *reports.Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := reports.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
