package reports

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", name, diff)
	}
}

// sampleReport is a run of mcpchaos test as the suite assembles it, from
// transcripts judged here: a baseline, a scenario that finds a crash and a
// lost response, one made indeterminate by its fault, one that passes.
func sampleReport(t *testing.T) *Report {
	t.Helper()
	session := func(name string, build func(b *tb)) (ScenarioResult, []Finding) {
		b := newTB()
		b.evs[0].Scenario = name
		b.evs[0].Repro = "mcpchaos test --scenario " + name + " --seed 7 -- python server.py"
		build(b)
		v := JudgeSession(b.evs)
		res := ScenarioResult{Name: name, Seed: 7, DurationMS: b.t / 1000, Findings: len(v.Findings), Indeterminate: v.Indeterminate, Notes: v.Notes, Outcome: OutcomePass}
		switch {
		case Failing(v.Findings):
			res.Outcome = OutcomeFail
		case len(v.Indeterminate) > 0:
			res.Outcome = OutcomeIndeterminate
		}
		return res, v.Findings
	}
	r := &Report{Schema: Schema, Tool: Tool{Name: "mcpchaos", Version: "0.3.0"}, Target: Target{Command: []string{"python", "server.py"}}, Seed: 7}
	base, _ := session("baseline", func(b *tb) {
		b.call("0", "initialize")
		b.at(120).replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"weather"}}}`)
		b.at(640).finish()
	})
	r.Baseline = &base
	eof, fs := session("eof-inflight", func(b *tb) {
		b.call("3", "tools/call")
		b.at(100).eofFault()
		b.at(150).stderr(readLines(t, "python_closed_resource_group.txt")...)
		b.at(812).stdoutEOF()
		b.exit(1)
		b.end("the server exited")
	})
	r.Scenarios = append(r.Scenarios, eof)
	r.Findings = append(r.Findings, fs...)
	stall, fs := session("stall-s2c", func(b *tb) {
		b.call("4", "tools/call")
		b.at(10).stall(-1)
		b.at(6000).clientClosed()
		b.at(9000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
		b.killed("SIGTERM", true)
		b.end("the client closed its output")
	})
	r.Scenarios = append(r.Scenarios, stall)
	r.Findings = append(r.Findings, fs...)
	close, fs := session("client-close", func(b *tb) {
		b.call("5", "tools/call")
		b.at(1000).clientClosed()
		b.at(2100).stdoutEOF()
		b.exit(0)
		b.end("the client closed its output")
	})
	r.Scenarios = append(r.Scenarios, close)
	r.Findings = append(r.Findings, fs...)
	pass, _ := session("burst", func(b *tb) {
		b.call("6", "tools/call")
		b.at(300).reply("6")
		b.at(1300).finish()
	})
	r.Scenarios = append(r.Scenarios, pass)
	// The suite says so of a scenario none of whose faults fired.
	r.Scenarios = append(r.Scenarios, ScenarioResult{Name: "eof-server-request", Seed: 7, DurationMS: 400, Outcome: OutcomeIndeterminate,
		Indeterminate: []string{"no fault fired: the moment this scenario waits for never came (eof:on=s2c:request)"}})
	r.Outcome = OutcomeFail
	return r
}

func TestWriteJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport(t).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json.golden", buf.Bytes())
}

func TestWriteSummaryGolden(t *testing.T) {
	var buf bytes.Buffer
	WriteSummary(&buf, sampleReport(t))
	golden(t, "summary.golden", buf.Bytes())
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
