package reports

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	goldenfile "github.com/mcpchaos/mcpchaos/internal/golden"
)

// Each rendering of the sample run, kept as a golden file: go test
// ./reports -update rewrites them after a deliberate change.
func TestRenderGolden(t *testing.T) {
	for _, format := range []string{"markdown", "junit", "github", "html"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, sampleReport(t), format); err != nil {
				t.Fatal(err)
			}
			goldenfile.Check(t, "report."+format+".golden", buf.Bytes())
		})
	}
}

// A run with a lot of findings, each with a long excerpt, still renders
// as Markdown under the 1 MiB a job summary takes, and says how many it
// left out.
func TestMarkdownStaysUnderTheLimit(t *testing.T) {
	r := sampleReport(t)
	f := r.Findings[0]
	f.Evidence = []Evidence{{Seq: 1, Type: "stderr", Excerpt: strings.Repeat("Traceback line\n", 400)}}
	f.Message = strings.Repeat("a long message ", 100)
	for range 20000 {
		r.Findings = append(r.Findings, f)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > MarkdownLimit {
		t.Errorf("%d bytes, over %d", buf.Len(), MarkdownLimit)
	}
	if !strings.Contains(buf.String(), "more findings, left out to keep this summary under 1 MiB") {
		t.Error("the summary does not say findings were left out")
	}
}

// Peers' bytes in a finding cannot break out of the Markdown: a message
// with markup is escaped, and an excerpt full of backticks gets a longer
// fence.
func TestMarkdownEscapesPeersBytes(t *testing.T) {
	r := &Report{Outcome: OutcomeFail, Scenarios: []ScenarioResult{{Name: "x|y", Outcome: OutcomeFail, Findings: 1}},
		Findings: []Finding{{Kind: KindProtocolViolation, Severity: SeverityError, Scenario: "x|y",
			Message:  "a frame <script>alert(1)</script> | `tick` **bold**",
			Evidence: []Evidence{{Seq: 3, Type: "received", Excerpt: "````\n# not a heading"}}, Repro: "mcpchaos test"}}}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{
		"a frame \\<script\\>alert(1)\\</script\\> \\| \\`tick\\` \\*\\*bold\\*\\*",
		"| x\\|y | ❌ fail |",
		"`````\nseq 3, received at 0s\n  | ````\n  | # not a heading\n`````",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, got)
		}
	}
}

// The JUnit rendering is well-formed XML whose counts add up: a failure
// per failing scenario, indeterminate scenarios skipped, and a run that
// ended in error is a testcase in error.
func TestJUnitCounts(t *testing.T) {
	type counts struct{ Tests, Failures, Errors, Skipped int }
	parse := func(r *Report) counts {
		var buf bytes.Buffer
		if err := WriteJUnit(&buf, r); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Errors   int `xml:"errors,attr"`
			Suite    struct {
				Skipped int `xml:"skipped,attr"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("not XML: %v\n%s", err, buf.String())
		}
		return counts{doc.Tests, doc.Failures, doc.Errors, doc.Suite.Skipped}
	}
	if diff := cmp.Diff(counts{Tests: 6, Failures: 1, Skipped: 1}, parse(sampleReport(t))); diff != "" {
		t.Errorf("sample run (-want +got):\n%s", diff)
	}
	// A peer's stderr in colour: its escape codes cannot make the file
	// unreadable.
	colour := sampleReport(t)
	colour.Findings[1].Evidence[0].Excerpt = "\x1b[31mTraceback\x1b[0m\x00 ]]> end"
	if diff := cmp.Diff(counts{Tests: 6, Failures: 1, Skipped: 1}, parse(colour)); diff != "" {
		t.Errorf("stderr in colour (-want +got):\n%s", diff)
	}
	broken := &Report{Outcome: OutcomeError, Error: "the server exited (status 1) before it answered initialize"}
	if diff := cmp.Diff(counts{Tests: 1, Errors: 1}, parse(broken)); diff != "" {
		t.Errorf("a run in error (-want +got):\n%s", diff)
	}
}

// A file that is not a report is refused with its name and, for bad JSON,
// the line and column.
func TestReadReportFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ name, body, want string }{
		{"empty.json", "", "empty.json: the file is empty; expected an mcpchaos --report file"},
		{"truncated.json", "{\n  \"schema\": \"mcpchaos.report/v1\",\n  \"seed\": ", "truncated.json:3:10: the report is not JSON: unexpected end of JSON input"},
		{"other.json", `{"schema": "mcpchaos.report/v9"}`, `other.json: the report's schema is "mcpchaos.report/v9"; this mcpchaos reads "mcpchaos.report/v1"`},
		{"noschema.json", `{"findings": []}`, `noschema.json: the report has no "schema" member`},
		{"types.json", "{\"schema\": \"mcpchaos.report/v1\",\n\"seed\": \"x\"}", "types.json:2:12: the report does not fit mcpchaos.report/v1: json: cannot unmarshal string into Go struct field Report.seed of type uint64"},
	} {
		_, err := ReadReportFile(write(tc.name, tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}
