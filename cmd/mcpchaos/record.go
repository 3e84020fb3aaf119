package main

import (
	"fmt"
	"io"
	"os"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/crosssession"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
	"github.com/mcpchaos/mcpchaos/wire"
)

// relayScenario resolves the one --scenario of a relaying command (wrap,
// proxy): a built-in preset, a file, or FILE#NAME. A workload is refused,
// since the relay carries the user's client's own requests, and so are
// expected findings without a report to check them in.
func relayScenario(command, selector string, reporting bool) (faults.Scenario, error) {
	var all []faults.Scenario
	for _, p := range faults.Presets() {
		all = append(all, p.Scenario)
	}
	sc, err := faults.ResolveScenario(selector, all)
	if err != nil {
		return sc, err
	}
	if !sc.Workload.IsZero() {
		return sc, fmt.Errorf("scenario %s: workload: shapes the probe client of mcpchaos test; %s relays your client's own requests (remove workload:, or run it with mcpchaos test)", sc.Name, command)
	}
	if len(sc.Findings) > 0 && !reporting {
		return sc, fmt.Errorf("scenario %s: findings: are checked when the session is judged; add --report FILE", sc.Name)
	}
	return sc, nil
}

// sessionRecord is where a relayed session's events go: the transcript
// file, and the streaming judge when a report is wanted. The judge keeps
// what open requests need, not every event, so a long session stays
// bounded.
type sessionRecord struct {
	path     string
	file     *os.File
	recorder *chaos.JSONLRecorder // nil when neither is wanted
	judge    *judge.Judger        // nil without a report
	// streams reads the record for answers on one MCP session's stream to
	// another's request (a proxy relaying several clients).
	streams   *crosssession.Streams
	stopFlush func()
}

// openSessionRecord creates the transcript at path (none when "") and the
// judge when reporting; events are flushed within transcriptFlush, since
// clients often SIGKILL their server, and with it wrap, right after their
// last call.
func openSessionRecord(path string, reporting bool) (*sessionRecord, error) {
	r := &sessionRecord{path: path, stopFlush: func() {}}
	switch {
	case path != "":
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("cannot create the transcript: %v", err)
		}
		r.file, r.recorder = f, chaos.NewJSONLRecorder(f)
	case reporting:
		r.recorder = chaos.NewJSONLRecorder(io.Discard)
	default:
		return r, nil
	}
	if reporting {
		r.judge, r.streams = judge.New(), crosssession.NewStreams()
		r.recorder.OnEvent = func(e wire.Event) {
			r.judge.Add(e)
			r.streams.Add(e)
		}
	}
	r.stopFlush = r.recorder.FlushEvery(transcriptFlush)
	return r, nil
}

// discard removes the transcript of a session that never started.
func (r *sessionRecord) discard() {
	r.stopFlush()
	if r.file != nil {
		r.file.Close()
		os.Remove(r.path)
	}
}

// finish flushes what is recorded and closes the transcript.
func (r *sessionRecord) finish() error {
	r.stopFlush()
	var err error
	if r.recorder != nil {
		r.recorder.StopEvents() // the judge is read next
		err = r.recorder.Flush()
	}
	if r.file != nil {
		r.file.Close()
	}
	return err
}

// report judges the session, checks a scenario's expectations, writes the
// one-scenario report to path, and returns the exit status it calls for.
func (r *sessionRecord) report(command string, out *reportOutputs, stdout io.Writer, target reports.Target, name string, seed uint64, sc *faults.Scenario, repro string, quiet bool, stderr io.Writer) int {
	v := r.judge.Verdict()
	v.Findings = append(v.Findings, r.streams.Findings()...)
	if sc != nil {
		suite.ApplyExpectation(*sc, seed, repro, &v)
	}
	rep := &reports.Report{
		Schema: reports.Schema, Tool: suite.ReportTool(version),
		Target: target, Seed: seed, Findings: v.Findings, Outcome: "pass",
		Scenarios: []reports.ScenarioResult{{Name: name, Seed: seed, Findings: len(v.Findings),
			Indeterminate: v.Indeterminate, Notes: v.Notes, Transcript: r.path,
			Outcome: reports.ScenarioOutcome(v.Findings, v.Indeterminate)}},
	}
	if reports.Failing(v.Findings) {
		rep.Outcome = reports.OutcomeFail
	}
	if err := out.write(rep, stdout); err != nil {
		return usageError(stderr, "%s: %v", command, err)
	}
	if !quiet {
		fmt.Fprintf(stderr, "mcpchaos %s: %d finding(s); report in %s\n", command, len(v.Findings), out.where())
	}
	return rep.ExitCode(false)
}
