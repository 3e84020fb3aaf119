package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/reports"
)

// runReport is mcpchaos report: a --report file rendered for CI or people;
// report diff compares two.
func runReport(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "diff" {
		return runReportDiff(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "merge" {
		return runReportMerge(args[1:], stdout, stderr)
	}
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.StringP("format", "f", "text", "`FORMAT` to render: "+strings.Join(reports.Formats, ", "))
	out := outputFlag(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos report [--format FORMAT] [-o FILE] REPORT.json\n\nRenders a report that test, test-client, wrap or proxy wrote with --report:\nas the terminal summary (text), Markdown for a CI job summary, JUnit XML for\na CI test view, GitHub Actions annotations (github), a self-contained HTML\npage, or JSON.\n\n%s", fs.FlagUsages())
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

// outputFlag is the -o flag of the report commands.
func outputFlag(fs *pflag.FlagSet) *string {
	return fs.StringP("output", "o", "-", "write to `FILE` (- is stdout)")
}

// runReportDiff is mcpchaos report diff OLD NEW: what a change fixed,
// broke, and left failing; exit 1 when something new fails.
func runReportDiff(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("report diff", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.StringP("format", "f", "markdown", "`FORMAT`: markdown or json")
	out := outputFlag(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos report diff [--format markdown|json] [-o FILE] OLD.json NEW.json\n\nCompares the failing findings of two reports of the same matrix (before and\nafter a change), matched by kind, crash signature, scenario and method: new,\nfixed, still failing. Exits 1 when anything new fails.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "report diff: %v (see mcpchaos report diff --help)", err)
	}
	if *format != "markdown" && *format != "md" && *format != "json" {
		return usageError(stderr, "report diff: --format %q: the diff renders as markdown or json", *format)
	}
	if fs.NArg() != 2 {
		return usageError(stderr, "report diff: give the old report and the new one, as in mcpchaos report diff main.json branch.json")
	}
	var reps [2]*reports.Report
	for i := range reps {
		r, err := reports.ReadReportFile(fs.Arg(i))
		if err != nil {
			return usageError(stderr, "report diff: %v", err)
		}
		reps[i] = r
	}
	d := reports.DiffReports(fs.Arg(0), reps[0], fs.Arg(1), reps[1])
	err := writeTo(*out, stdout, func(w io.Writer) error {
		if *format == "json" {
			return d.WriteJSON(w)
		}
		return d.WriteMarkdown(w)
	})
	if err != nil {
		return usageError(stderr, "report diff: %v", err)
	}
	if d.Regressed() {
		return 1
	}
	return exitOK
}

// runReportMerge is mcpchaos report merge SHARD.json...: the reports of
// every shard of one run (--shard K/N) joined into the run's report.
func runReportMerge(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("report merge", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.StringP("format", "f", "json", "`FORMAT` of the merged report: "+strings.Join(reports.Formats, ", "))
	out := outputFlag(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos report merge [--format FORMAT] [-o FILE] SHARD.json...\n\nJoins the reports of every shard of one run (test or test-client with\n--shard K/N and one --seed) into the report of the whole matrix. Refuses\nreports of different runs, a shard given twice and a missing shard.\nExits as test does: 0, or 1 when the merged run has error findings.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "report merge: %v (see mcpchaos report merge --help)", err)
	}
	if err := reports.CheckFormat(*format); err != nil {
		return usageError(stderr, "report merge: --format: %v", err)
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "report merge: give the shards' reports, as in mcpchaos report merge -o run.json shard-*.json")
	}
	var rs []*reports.Report
	for _, path := range fs.Args() {
		r, err := reports.ReadReportFile(path)
		if err != nil {
			return usageError(stderr, "report merge: %v", err)
		}
		rs = append(rs, r)
	}
	merged, err := reports.MergeShards(fs.Args(), rs)
	if err != nil {
		return usageError(stderr, "report merge: %v", err)
	}
	if err := writeRendered(*out, *format, merged, stdout); err != nil {
		return usageError(stderr, "report merge: %v", err)
	}
	return merged.ExitCode(false)
}
