package judge

import (
	"bytes"
	"path/filepath"
	"testing"

	goldenfile "github.com/mcpchaos/mcpchaos/internal/golden"
	"github.com/mcpchaos/mcpchaos/reports"
)

// sampleReport is a run of mcpchaos test as the suite assembles it, from
// transcripts judged here: a baseline, a scenario that finds a crash and a
// lost response, one made indeterminate by its fault, one that passes.
func sampleReport(t *testing.T) *reports.Report {
	t.Helper()
	session := func(name string, build func(b *tb)) (reports.ScenarioResult, []reports.Finding) {
		b := newTB()
		b.evs[0].Scenario = name
		b.evs[0].Repro = "mcpchaos test --scenario " + name + " --seed 7 -- python server.py"
		build(b)
		v := Session(b.evs)
		res := reports.ScenarioResult{Name: name, Seed: 7, DurationMS: b.t / 1000, Findings: len(v.Findings), Indeterminate: v.Indeterminate, Notes: v.Notes, Outcome: reports.OutcomePass}
		switch {
		case reports.Failing(v.Findings):
			res.Outcome = reports.OutcomeFail
		case len(v.Indeterminate) > 0:
			res.Outcome = reports.OutcomeIndeterminate
		}
		return res, v.Findings
	}
	r := &reports.Report{Schema: reports.Schema, Tool: reports.Tool{Name: "mcpchaos", Version: "0.3.0"}, Target: reports.Target{Command: []string{"python", "server.py"}}, Seed: 7}
	base, _ := session("baseline", func(b *tb) {
		b.call("0", "initialize")
		b.at(120).replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"weather","version":"1.0"}}}`)
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
	r.Scenarios = append(r.Scenarios, reports.ScenarioResult{Name: "eof-server-request", Seed: 7, DurationMS: 400, Outcome: reports.OutcomeIndeterminate,
		Indeterminate: []string{"no fault fired: the moment this scenario waits for never came (eof:on=s2c:request)"}})
	r.Outcome = reports.OutcomeFail
	return r
}

func TestWriteJSONGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport(t).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "report.json.golden", buf.Bytes())
}

func TestWriteSummaryGolden(t *testing.T) {
	var buf bytes.Buffer
	reports.WriteSummary(&buf, sampleReport(t))
	goldenfile.Check(t, "summary.golden", buf.Bytes())
}

// The judge's report of the sample run is the fixture the renderings of
// package reports are tested on: keep the two equal.
func TestSampleReportIsTheReportsFixture(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport(t).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("..", "..", "reports", "testdata", "sample.report.json"), buf.Bytes())
}
