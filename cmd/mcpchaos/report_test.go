package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
)

// One run of test writes its JSON report and, with --report-format, the
// renderings CI needs; mcpchaos report renders the JSON file again the
// same way.
func TestReportFormats(t *testing.T) {
	dir := t.TempDir()
	jsonPath, junit, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.md")
	var stdout, stderr bytes.Buffer
	args := []string{"test", "--seed", "3", "--deadline", "2s", "--scenario", "eof-inflight", "--report", jsonPath,
		"--report-format", "junit=" + junit, "--report-format", "markdown=" + md, "--report-format", "github=-", "--", crashServer(t)}
	if code := run(args, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "::error title=mcpchaos crash go%3Apanic in eof-inflight::") {
		t.Errorf("no GitHub annotation on stdout:\n%s", stdout.String())
	}
	r, err := reports.ReadReportFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	for format, path := range map[string]string{"junit": junit, "markdown": md} {
		written, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := reports.Render(&want, r, format); err != nil {
			t.Fatal(err)
		}
		if want.String() != string(written) {
			t.Errorf("%s: --report-format wrote other bytes than mcpchaos report renders from the JSON", format)
		}
		var out, errb bytes.Buffer
		if code := run([]string{"report", "--format", format, jsonPath}, nil, &out, &errb); code != exitOK {
			t.Errorf("report --format %s: exit %d: %s", format, code, errb.String())
		}
		if out.String() != want.String() {
			t.Errorf("report --format %s differs from the rendering", format)
		}
	}
}

func TestReportUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"schema\": \"mcpchaos.report/v1\",\n  \"seed\": oops\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkUsageErrors(t, []usageCase{
		{"no file", []string{"report"}, "give one report file"},
		{"unknown format", []string{"report", "--format", "pdf", bad}, `unknown report format "pdf" (formats: json, markdown, junit, github, html, text)`},
		{"bad JSON", []string{"report", bad}, bad + ":3:11: the report is not JSON"},
		{"missing file", []string{"report", filepath.Join(dir, "nope.json")}, "cannot read the report"},
		{"bad --report-format", []string{"test", "--report-format", "junit", "--", "cat"}, `--report-format "junit": write FORMAT=FILE`},
		{"unknown --report-format", []string{"test", "--report-format", "pdf=x.pdf", "--", "cat"}, `unknown report format "pdf"`},
		{"wrap's stdout", []string{"wrap", "--report-format", "junit=-", "--", "cat"}, "stdout carries the MCP session here; give a file"},
		{"with --cases", []string{"test", "--cases", dir, "--report-format", "junit=x.xml"}, "it takes no --report-format"},
	})
}

// report diff, end to end on a planted bug: the buggy server's run against
// its fixed twin's is a fix (exit 0), and the other way round a regression
// (exit 1) that names the crash by kind, signature and scenario.
func TestReportDiffBuggyVsFixed(t *testing.T) {
	dir := t.TempDir()
	bin := crashServer(t)
	buggy, fixed := filepath.Join(dir, "buggy.json"), filepath.Join(dir, "fixed.json")
	for path, target := range map[string][]string{buggy: {bin}, fixed: {bin, "--fixed"}} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"test", "--seed", "3", "--deadline", "2s", "--scenario", "eof-inflight", "--report", path, "--"}, target...)
		run(args, nil, &stdout, &stderr)
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%v\n%s%s", err, stdout.String(), stderr.String())
		}
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"the fix", []string{"report", "diff", buggy, fixed}, 0, "| crash go:panic in eof-inflight | 1 | Go panic: send on closed channel"},
		{"a regression", []string{"report", "diff", "--format", "json", fixed, buggy}, 1, `"newly_failing": [
    {
      "kind": "crash",
      "signature": "go:panic",
      "scenario": "eof-inflight",`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, nil, &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.contains) {
				t.Errorf("the diff lacks %q:\n%s", tc.contains, stdout.String())
			}
		})
	}
	checkUsageErrors(t, []usageCase{
		{"one file", []string{"report", "diff", buggy}, "give the old report and the new one"},
		{"bad format", []string{"report", "diff", "--format", "junit", buggy, fixed}, "the diff renders as markdown or json"},
	})
}

// Baselines end to end on a planted bug: --write-baseline keeps the buggy
// server's crash; with --baseline the same server passes (the crash is
// known), its fixed twin fails (the entry is stale: a fixed bug must leave
// the baseline), and a malformed baseline is a usage error naming the line.
func TestBaselineFlow(t *testing.T) {
	dir := t.TempDir()
	bin := crashServer(t)
	baseline := filepath.Join(dir, "baseline.yaml")
	runTest := func(extra []string, target ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"test", "--seed", "3", "--deadline", "2s", "--scenario", "eof-inflight"}, extra...), "--")
		code := run(append(args, target...), nil, &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	if code, out := runTest([]string{"--write-baseline", baseline}, bin); code != 1 || !strings.Contains(out, "baseline of 1 known finding(s) written to "+baseline) {
		t.Fatalf("--write-baseline: exit %d\n%s", code, out)
	}
	b, err := reports.ReadBaselineFile(baseline)
	if err != nil {
		t.Fatal(err)
	}
	// "-" writes the same baseline to stdout (it once crashed on a nil writer).
	if code, out := runTest([]string{"--write-baseline", "-"}, bin); code != 1 || !strings.Contains(out, "version: 1") || !strings.Contains(out, "kind: crash") {
		t.Fatalf("--write-baseline -: exit %d\n%s", code, out)
	}
	if len(b.Findings) != 1 || b.Findings[0].String() != "crash go:panic in eof-inflight" {
		t.Fatalf("baseline %+v", b.Findings)
	}
	if code, out := runTest([]string{"--baseline", baseline}, bin); code != 0 || !strings.Contains(out, "(known: in the baseline)") {
		t.Errorf("the buggy server against its baseline: exit %d, want 0\n%s", code, out)
	}
	if code, out := runTest([]string{"--baseline", baseline}, bin, "--fixed"); code != 1 || !strings.Contains(out, "stale baseline entry: crash go:panic in eof-inflight no longer fails; remove it from "+baseline) {
		t.Errorf("the fixed twin against the baseline: exit %d, want 1 and the stale entry\n%s", code, out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\nfindings:\n  - kind: crash\n    scenario: eof-inflight\n    reason: flaky\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkUsageErrors(t, []usageCase{
		{"unknown key", []string{"test", "--baseline", bad, "--", bin}, bad + ":5: field reason not found"},
		{"missing", []string{"test", "--baseline", filepath.Join(dir, "nope.yaml"), "--", bin}, "cannot read the baseline"},
	})
}

// Sharding: the shards of a run, merged, give the scenarios and findings
// the unsharded run gives; merge refuses a shard twice, a missing shard
// and a shard of another run.
func TestShardAndMerge(t *testing.T) {
	dir := t.TempDir()
	bin := crashServer(t)
	matrix := []string{"--scenario", "eof-inflight", "--scenario", "burst-c2s", "--scenario", "half-close-s2c"}
	runTo := func(path string, extra ...string) {
		var stdout, stderr bytes.Buffer
		args := append(append(append([]string{"test", "--deadline", "2s", "--report", path}, matrix...), extra...), "--", bin)
		if code := run(args, nil, &stdout, &stderr); code == exitUsage {
			t.Fatalf("exit 2: %s", stderr.String())
		}
	}
	full, s1, s2, other := filepath.Join(dir, "full.json"), filepath.Join(dir, "s1.json"), filepath.Join(dir, "s2.json"), filepath.Join(dir, "other.json")
	runTo(full, "--seed", "3")
	runTo(s1, "--seed", "3", "--shard", "1/2")
	runTo(s2, "--seed", "3", "--shard", "2/2")
	runTo(other, "--seed", "4", "--shard", "2/2")
	merged := filepath.Join(dir, "merged.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report", "merge", "-o", merged, s2, s1}, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("merge: exit %d, want 1 (the crash): %s", code, stderr.String())
	}
	summary := func(path string) []string {
		r, err := reports.ReadReportFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range r.Scenarios {
			out = append(out, s.Name+" "+s.Outcome)
		}
		for _, f := range r.Findings {
			if f.Severity == reports.SeverityError {
				out = append(out, reports.FingerprintOf(&f).String())
			}
		}
		return append(out, "outcome "+r.Outcome)
	}
	if diff := cmp.Diff(summary(full), summary(merged)); diff != "" {
		t.Errorf("merged shards vs the whole run (-whole +merged):\n%s", diff)
	}
	checkUsageErrors(t, []usageCase{
		{"a shard twice", []string{"report", "merge", s1, s1}, "are both shard 1/2"},
		{"a missing shard", []string{"report", "merge", s1}, "shard 2/2 of run"},
		{"another run", []string{"report", "merge", s1, other}, "is shard 2/2 of another run than " + s1},
		{"not a shard", []string{"report", "merge", full}, full + " is not a shard's report"},
		{"shard without seed", []string{"test", "--shard", "1/2", "--", bin}, "--shard 1/2 needs --seed"},
		{"bad shard", []string{"test", "--seed", "1", "--shard", "3/2", "--", bin}, `--shard "3/2": write K/N with 1 <= K <= N`},
	})
}
