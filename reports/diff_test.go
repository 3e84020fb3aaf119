package reports

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	goldenfile "github.com/mcpchaos/mcpchaos/internal/golden"
)

// A diff matches findings by kind, signature, scenario and method, never
// by ids, messages or seeds; counts only error findings; and does not call
// a finding fixed (or new) when its scenario ran in one run only.
func TestDiffReports(t *testing.T) {
	finding := func(kind, sig, scenario, method, msg string) Finding {
		f := Finding{Kind: kind, Severity: SeverityError, Signature: sig, Scenario: scenario, Message: msg, Repro: "mcpchaos test --scenario " + scenario}
		if method != "" {
			f.Request = &Request{ID: "7", Method: method}
		}
		return f
	}
	scenarios := func(names ...string) []ScenarioResult {
		var out []ScenarioResult
		for _, n := range names {
			out = append(out, ScenarioResult{Name: n})
		}
		return out
	}
	old := &Report{Seed: 1, Outcome: OutcomeFail, Baseline: &ScenarioResult{Name: "baseline"}, Scenarios: scenarios("eof-inflight", "stall-s2c", "gone"),
		Findings: []Finding{
			finding(KindCrash, "go:panic", "eof-inflight", "", "Go panic: send on closed channel"),
			finding(KindHang, "", "stall-s2c", "tools/call", "tools/call (id 3) unanswered"),
			finding(KindHang, "", "stall-s2c", "tools/call", "tools/call (id 4) unanswered"),
			finding(KindZombie, "", "gone", "", "did not exit"),
			{Kind: KindLostResponse, Severity: SeverityWarning, Scenario: "eof-inflight", Message: "a warning fails nothing"},
		}}
	neu := &Report{Seed: 2, Outcome: OutcomeFail, Baseline: &ScenarioResult{Name: "baseline"}, Scenarios: scenarios("eof-inflight", "stall-s2c", "burst-c2s"),
		Findings: []Finding{
			finding(KindHang, "", "stall-s2c", "tools/call", "tools/call (id 9) unanswered, another id"),
			finding(KindProtocolViolation, "", "burst-c2s", "", "answered a notification"),
			finding(KindCrash, "python:ClosedResourceError", "eof-inflight", "", "a new crash"),
		}}
	d := DiffReports("old.json", old, "new.json", neu)
	fps := func(es []DiffEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Fingerprint.String())
		}
		return out
	}
	for _, tc := range []struct {
		name string
		got  []DiffEntry
		want []string
	}{
		{"new", d.NewlyFailing, []string{"crash python:ClosedResourceError in eof-inflight"}},
		{"fixed", d.Fixed, []string{"crash go:panic in eof-inflight"}},
		{"still failing", d.StillFailing, []string{"hang in stall-s2c (tools/call)"}},
		{"not compared", d.NotCompared, []string{"protocol-violation in burst-c2s", "zombie in gone"}},
	} {
		if diff := cmp.Diff(tc.want, fps(tc.got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if !d.Regressed() {
		t.Error("a new crash is not a regression")
	}
	if back := DiffReports("new.json", neu, "new.json", neu); back.Regressed() || len(back.StillFailing) != 3 {
		t.Errorf("a run against itself: %+v", back)
	}
	var md bytes.Buffer
	if err := d.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "diff.markdown.golden", md.Bytes())
	var js bytes.Buffer
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "diff.json.golden", js.Bytes())
}
