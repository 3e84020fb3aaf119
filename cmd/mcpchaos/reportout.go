package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/reports"
)

// reportOutputs are where a run's report goes: --report FILE (the JSON)
// and each --report-format FORMAT=FILE, so that one run writes what CI
// needs (JUnit for the test view, Markdown for the job summary).
type reportOutputs struct {
	jsonPath string
	specs    []string
	outs     []reportOutput
}

type reportOutput struct{ format, path string }

func (o *reportOutputs) register(fs *pflag.FlagSet, jsonDoc string) {
	fs.StringVar(&o.jsonPath, "report", "", jsonDoc)
	fs.StringArrayVar(&o.specs, "report-format", nil, "also write the report rendered as `FORMAT=FILE` (repeatable; formats: "+strings.Join(reports.Formats, ", ")+"; FILE - is stdout)")
}

// parse checks --report-format before anything runs. wrap speaks MCP on
// its stdout, so for it (stdoutFree false) FILE cannot be -.
func (o *reportOutputs) parse(stdoutFree bool) error {
	o.outs = nil
	for _, s := range o.specs {
		format, path, ok := strings.Cut(s, "=")
		if !ok || path == "" {
			return fmt.Errorf("--report-format %q: write FORMAT=FILE, as in --report-format junit=results.xml", s)
		}
		if err := reports.CheckFormat(format); err != nil {
			return fmt.Errorf("--report-format %s: %v", s, err)
		}
		if path == "-" && !stdoutFree {
			return fmt.Errorf("--report-format %s: stdout carries the MCP session here; give a file", s)
		}
		o.outs = append(o.outs, reportOutput{format, path})
	}
	return nil
}

// wanted reports whether any report is to be written.
func (o *reportOutputs) wanted() bool { return o.jsonPath != "" || len(o.specs) > 0 }

// write writes the JSON report and every rendering asked for (to stdout
// for FILE -).
func (o *reportOutputs) write(r *reports.Report, stdout io.Writer) error {
	if o.jsonPath != "" {
		if err := writeReport(o.jsonPath, r); err != nil {
			return err
		}
	}
	for _, out := range o.outs {
		if err := writeRendered(out.path, out.format, r, stdout); err != nil {
			return err
		}
	}
	return nil
}

// writeRendered writes r in format to path (- is stdout).
func writeRendered(path, format string, r *reports.Report, stdout io.Writer) error {
	return writeTo(path, stdout, func(w io.Writer) error { return reports.Render(w, r, format) })
}

// writeTo writes what write writes into the file path, or to stdout for -.
func writeTo(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" {
		return write(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// where names the files the report went to, for a closing line.
func (o *reportOutputs) where() string {
	var files []string
	if o.jsonPath != "" {
		files = append(files, o.jsonPath)
	}
	for _, out := range o.outs {
		if out.path != "-" {
			files = append(files, out.path)
		}
	}
	if len(files) == 0 {
		return "stdout"
	}
	return strings.Join(files, ", ")
}
