package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// runJudge re-judges stored transcripts offline; the findings are the ones
// the live run reported.
func runJudge(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("judge", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var out reportOutputs
	out.register(fs, "write the mcpchaos.report/v1 JSON report of the transcripts to `FILE`")
	strict := fs.Bool("strict", false, "exit 1 on warnings too")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos judge [flags] TRANSCRIPT.jsonl...\n\nJudges stored transcripts (--transcript, --transcript-dir) again, offline, with\nthe findings the live run reported, one scenario per transcript.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "judge: %v (see mcpchaos judge --help)", err)
	}
	if err := out.parse(true); err != nil {
		return usageError(stderr, "judge: %v", err)
	}
	args = fs.Args()
	if len(args) == 0 {
		return usageError(stderr, "judge: give one or more transcript files, as in mcpchaos judge run/eof-inflight.jsonl")
	}
	report := &reports.Report{Schema: reports.Schema, Tool: reports.Tool{Name: "mcpchaos", Version: version}}
	for _, path := range args {
		f, err := os.Open(path)
		if err != nil {
			return usageError(stderr, "judge: %v", err)
		}
		var events []wire.Event
		err = wire.ReadTranscript(f, func(e wire.Event) error {
			events = append(events, e)
			return nil
		})
		f.Close()
		if err != nil {
			return usageError(stderr, "judge: %s: %v", path, err)
		}
		if len(events) == 0 || events[0].Type != wire.EventSession {
			return usageError(stderr, "judge: %s does not start with a session event; is it an mcpchaos transcript?", path)
		}
		v := judge.Session(events)
		s := events[0]
		if s.Seed != nil {
			report.Seed = *s.Seed
		}
		report.Target.Command = s.Command
		res := reports.ScenarioResult{Name: s.Scenario, Findings: len(v.Findings), Indeterminate: v.Indeterminate, Notes: v.Notes, Transcript: path,
			Outcome: reports.ScenarioOutcome(v.Findings, v.Indeterminate)}
		if s.Seed != nil {
			res.Seed = *s.Seed
		}
		if len(events) > 1 {
			res.DurationMS = (events[len(events)-1].T - events[0].T) / 1000
		}
		report.Scenarios = append(report.Scenarios, res)
		report.Findings = append(report.Findings, v.Findings...)
	}
	report.Outcome = "pass"
	if reports.Failing(report.Findings) {
		report.Outcome = "fail"
	}
	return finishReport(report, &out, *strict, stdout, stderr)
}
