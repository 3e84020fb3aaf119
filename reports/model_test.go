package reports

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// sampleReport is the sample run (a baseline, a scenario that finds a
// crash and a lost response, one made indeterminate by its fault, one that
// passes) as the judge reports it: judge's TestWriteJSONGolden writes the
// same into judge/testdata/report.json.golden.
func sampleReport(t *testing.T) *Report {
	t.Helper()
	r, err := ReadReportFile(filepath.Join("testdata", "sample.report.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWriteSummaryBaselineFails(t *testing.T) {
	r := &Report{Schema: Schema, Outcome: OutcomeFail,
		Baseline:  &ScenarioResult{Name: "baseline", Outcome: OutcomeFail, DurationMS: 2400, Findings: 1},
		Scenarios: []ScenarioResult{{Name: "stall-s2c", Outcome: OutcomePass, DurationMS: 2500, Notes: []string{"1 finding as in the baseline, reported there"}}}}
	var buf bytes.Buffer
	WriteSummary(&buf, r)
	want := "FAIL   baseline (baseline, no faults)    2.4s  1 finding\n" +
		"PASS   stall-s2c                         2.5s\n\n" +
		"1 scenario: 1 passed, 0 failed, 0 indeterminate; 0 findings (0 errors, 0 warnings); outcome fail\n" +
		"the target fails without faults: the baseline's findings are listed once, and each scenario reports only what differs from them\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// --scenario baseline runs no fault scenario: the totals say the baseline
// ran, rather than "0 scenarios: 0 passed".
func TestWriteSummaryBaselineAlone(t *testing.T) {
	r := &Report{Schema: Schema, Outcome: OutcomePass,
		Baseline: &ScenarioResult{Name: "baseline", Outcome: OutcomePass, DurationMS: 8600}}
	var buf bytes.Buffer
	WriteSummary(&buf, r)
	want := "PASS   baseline (baseline, no faults)    8.6s\n\n" +
		"the baseline alone, no fault scenario: pass; 0 findings (0 errors, 0 warnings); outcome pass\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

func TestReadReportRoundTrip(t *testing.T) {
	r := sampleReport(t)
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-wrote +read):\n%s", diff)
	}
}

// TestRequestIDIsJSON pins DESIGN's "request": {"id": 3}: the id is the JSON
// value the peer sent, not a string holding it.
func TestRequestIDIsJSON(t *testing.T) {
	for _, tc := range []struct{ id, json string }{
		{"3", `{"id":3,"method":"tools/call"}`},
		{`"a"`, `{"id":"a","method":"tools/call"}`},
		{"null", `{"id":null,"method":"tools/call"}`},
		{"not json", `{"id":"not json","method":"tools/call"}`},
	} {
		b, err := (&Request{ID: tc.id, Method: "tools/call"}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.json {
			t.Errorf("Request{ID: %s} = %s, want %s", tc.id, b, tc.json)
		}
	}
	var r Request
	if err := r.UnmarshalJSON([]byte(`{"id": { "k" : 1 }, "method": "x"}`)); err != nil {
		t.Fatal(err)
	}
	if r.ID != `{"k":1}` || r.Method != "x" {
		t.Errorf("decoded %+v, want the id's compact JSON text", r)
	}
}

func TestReadReportRejects(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"another schema", `{"schema":"mcpchaos.report/v2","outcome":"pass"}`, `the report's schema is "mcpchaos.report/v2"; this mcpchaos reads "mcpchaos.report/v1"`},
		{"no schema", `{"outcome":"pass"}`, `the report has no "schema" member`},
		{"not JSON", `PASS eof-inflight 812ms`, "the report is not JSON"},
		{"wrong shape", `{"schema":"mcpchaos.report/v1","seed":"seven"}`, "the report does not fit mcpchaos.report/v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadReport(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadReport error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	errF := Finding{Kind: KindCrash, Severity: SeverityError}
	warnF := Finding{Kind: KindLostResponse, Severity: SeverityWarning}
	for _, tc := range []struct {
		name     string
		r        Report
		lax, str int
	}{
		{"no findings", Report{Outcome: OutcomePass}, 0, 0},
		{"indeterminate scenarios only", Report{Outcome: OutcomePass, Scenarios: []ScenarioResult{{Outcome: OutcomeIndeterminate}}}, 0, 0},
		{"an error finding", Report{Outcome: OutcomeFail, Findings: []Finding{errF}}, 1, 1},
		{"warnings only", Report{Outcome: OutcomeFail, Findings: []Finding{warnF, warnF}}, 0, 1},
		{"a warning and an error", Report{Outcome: OutcomeFail, Findings: []Finding{warnF, errF}}, 1, 1},
		{"a finding without a severity counts as an error", Report{Outcome: OutcomeFail, Findings: []Finding{{Kind: KindHang}}}, 1, 1},
		{"outcome error wins", Report{Outcome: OutcomeError, Findings: []Finding{errF}}, 2, 2},
		{"expected findings only (a scenario pins a known bug)", Report{Outcome: OutcomePass, Findings: []Finding{{Kind: KindCrash, Severity: SeverityError, Expected: true}, {Kind: KindLostResponse, Severity: SeverityWarning, Expected: true}}}, 0, 0},
		{"an expected and an unexpected error", Report{Outcome: OutcomeFail, Findings: []Finding{{Kind: KindCrash, Severity: SeverityError, Expected: true}, errF}}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.ExitCode(false); got != tc.lax {
				t.Errorf("ExitCode(false) = %d, want %d", got, tc.lax)
			}
			if got := tc.r.ExitCode(true); got != tc.str {
				t.Errorf("ExitCode(true) = %d, want %d", got, tc.str)
			}
		})
	}
}
