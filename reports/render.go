package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Formats are the renderings of a report, by the name --format and
// --report-format take.
var Formats = []string{"json", "markdown", "junit", "github", "html", "text"}

// Render writes the report in format (one of Formats).
func Render(w io.Writer, r *Report, format string) error {
	switch format {
	case "json":
		return r.WriteJSON(w)
	case "markdown", "md":
		return WriteMarkdown(w, r)
	case "junit":
		return WriteJUnit(w, r)
	case "github":
		return WriteGitHub(w, r)
	case "html":
		return WriteHTML(w, r)
	case "text":
		WriteSummary(w, r)
		return nil
	}
	return fmt.Errorf("unknown report format %q (formats: %s)", format, strings.Join(Formats, ", "))
}

// CheckFormat reports whether format names a rendering.
func CheckFormat(format string) error {
	if format == "md" {
		return nil
	}
	for _, f := range Formats {
		if f == format {
			return nil
		}
	}
	return fmt.Errorf("unknown report format %q (formats: %s)", format, strings.Join(Formats, ", "))
}

// ReadReportFile reads a report written by --report. An error names the
// file, and the line and column where the JSON goes wrong.
func ReadReportFile(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the report: %w", err)
	}
	r, err := ReadReport(bytes.NewReader(b))
	if err == nil {
		return r, nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(b)) == 0:
		return nil, fmt.Errorf("%s: the file is empty; expected an mcpchaos --report file", path)
	case errors.As(err, &syn):
		// Offset counts the offending byte: the column is that byte's.
		return nil, fmt.Errorf("%s:%s: %w", path, lineCol(b, syn.Offset-1), err)
	case errors.As(err, &typ):
		return nil, fmt.Errorf("%s:%s: %w", path, lineCol(b, typ.Offset), err)
	}
	return nil, fmt.Errorf("%s: %w", path, err)
}

// lineCol is the line:column of byte offset off in b, both from 1.
func lineCol(b []byte, off int64) string {
	off = min(max(off, 0), int64(len(b)))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(b[:off], '\n'))
	return fmt.Sprintf("%d:%d", line, col)
}

// tableRow is a row of a rendering's table of scenarios.
type tableRow struct {
	ScenarioResult
	baseline bool
}

// label is name (the row's name as the rendering writes it) marked as the
// baseline's on the baseline's row.
func (t tableRow) label(name string) string {
	if t.baseline {
		return name + " (baseline, no faults)"
	}
	return name
}

// tableRows are the rows every rendering's table of scenarios shows: the
// baseline first, then the scenarios in the report's order.
func tableRows(r *Report) []tableRow {
	rows := make([]tableRow, 0, len(r.Scenarios)+1)
	if r.Baseline != nil {
		rows = append(rows, tableRow{ScenarioResult: *r.Baseline, baseline: true})
	}
	for _, s := range r.Scenarios {
		rows = append(rows, tableRow{ScenarioResult: s})
	}
	return rows
}
