package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A baseline written from a run reads back the same; applied to the run,
// every finding is known and the run passes; applied to a run without one
// of them, that entry is stale and fails the run; an entry of a scenario
// the run did not run says nothing.
func TestBaselineRoundTripAndApply(t *testing.T) {
	r := sampleReport(t)
	b := BaselineOf(r)
	if diff := cmp.Diff([]BaselineEntry{{Fingerprint: Fingerprint{Kind: KindCrash, Signature: "python:ClosedResourceError", Scenario: "eof-inflight"}}}, b.Findings); diff != "" {
		t.Errorf("baseline of the sample run (-want +got):\n%s", diff)
	}
	b.Findings[0].Note = "python-sdk #1234: fixed upstream, not released"
	b.Findings = append(b.Findings, BaselineEntry{Fingerprint: Fingerprint{Kind: KindHang, Scenario: "not-run-here", Method: "tools/call"}})
	path := filepath.Join(t.TempDir(), "baseline.yaml")
	var buf bytes.Buffer
	if err := b.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBaselineFile(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if diff := cmp.Diff(b, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}

	got.Apply(r, path)
	if r.Outcome != OutcomePass || r.ExitCode(false) != 0 || len(r.StaleBaseline) != 0 {
		t.Errorf("a run whose findings are all known: outcome %s, exit %d, stale %v", r.Outcome, r.ExitCode(false), r.StaleBaseline)
	}
	for _, s := range r.Scenarios {
		if s.Name == "eof-inflight" && s.Outcome != OutcomePass {
			t.Errorf("eof-inflight is %s with its crash known", s.Outcome)
		}
	}
	var sum bytes.Buffer
	WriteSummary(&sum, r)
	if !strings.Contains(sum.String(), "crash  error (known: in the baseline)  python:ClosedResourceError  [eof-inflight]") {
		t.Errorf("the summary does not mark the known finding:\n%s", sum.String())
	}

	fixed := sampleReport(t)
	fixed.Findings = fixed.Findings[:1] // the warning only: the crash is gone
	got.Apply(fixed, path)
	want := []Fingerprint{{Kind: KindCrash, Signature: "python:ClosedResourceError", Scenario: "eof-inflight"}}
	if diff := cmp.Diff(want, fixed.StaleBaseline); diff != "" {
		t.Errorf("stale entries (-want +got):\n%s", diff)
	}
	if fixed.Outcome != OutcomeFail || fixed.ExitCode(false) != 1 {
		t.Errorf("a stale entry does not fail the run: outcome %s, exit %d", fixed.Outcome, fixed.ExitCode(false))
	}
	sum.Reset()
	WriteSummary(&sum, fixed)
	if !strings.Contains(sum.String(), "stale baseline entry: crash python:ClosedResourceError in eof-inflight no longer fails; remove it from "+path) {
		t.Errorf("the summary does not name the stale entry:\n%s", sum.String())
	}
}

// A baseline file that is not one is refused with its name and line.
func TestReadBaselineFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"empty", "", ":1: the file is empty; a baseline starts with version: 1"},
		{"unknown key", "version: 1\nfindings:\n  - kind: crash\n    scenario: a\n    sig: go:panic\n", ":5: field sig not found in type reports.BaselineEntry"},
		{"unknown top key", "version: 1\nentries: []\n", ":2: field entries not found in type reports.Baseline"},
		{"version", "version: 2\nfindings: []\n", ":1: version: 2; this mcpchaos reads baseline version 1"},
		{"unknown kind", "version: 1\nfindings:\n  - kind: crashed\n    scenario: a\n", `:3: findings[0].kind: unknown kind "crashed" (kinds: hang, lost-response, duplicate-response, unknown-response, crash, zombie, protocol-violation, cross-session, security)`},
		{"no scenario", "version: 1\nfindings:\n  - kind: hang\n", ":3: findings[0]: no scenario"},
		{"not YAML", "version: [1\n", "did not find expected"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadBaselineFile(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want the file and %q", tc.name, err, tc.want)
		}
	}
}
