package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/reports"
)

// runReport is mcpchaos report: a --report file rendered for CI or people.
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.StringP("format", "f", "text", "`FORMAT` to render: "+strings.Join(reports.Formats, ", "))
	out := fs.StringP("output", "o", "-", "write to `FILE` (default: stdout)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos report [--format FORMAT] [-o FILE] REPORT.json\n\nRenders a report that test, test-client, wrap or proxy wrote with --report:\nas the terminal summary (text), Markdown for a CI job summary, JUnit XML for\na CI test view, GitHub Actions annotations (github), or JSON.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "report: %v (see mcpchaos report --help)", err)
	}
	if err := reports.CheckFormat(*format); err != nil {
		return usageError(stderr, "report: --format: %v", err)
	}
	if fs.NArg() != 1 {
		return usageError(stderr, "report: give one report file, as in mcpchaos report --format markdown report.json")
	}
	r, err := reports.ReadReportFile(fs.Arg(0))
	if err != nil {
		return usageError(stderr, "report: %v", err)
	}
	if err := writeRendered(*out, *format, r, stdout); err != nil {
		return usageError(stderr, "report: %v", err)
	}
	return exitOK
}
