package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/suite"
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
			fmt.Fprintf(stdout, "Usage: mcpchaos judge [flags] TRANSCRIPT.jsonl...\n\nJudges stored transcripts (--transcript, --transcript-dir) again, offline, with\nthe findings the live run reported, one scenario per transcript: a finding the\nbaseline of the same target has too is reported once, in the baseline.\n\n%s", fs.FlagUsages())
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
	report, err := suite.Rejudge(args, suite.ReportTool(version))
	if err != nil {
		return usageError(stderr, "judge: %v", err)
	}
	return finishReport(report, &out, *strict, stdout, stderr)
}
