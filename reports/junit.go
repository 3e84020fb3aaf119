package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit XML rendering follows the Jenkins xunit plugin's junit-10.xsd,
// the schema GitLab, Jenkins and the test-report actions read: one
// testsuite per report, one testcase per scenario (the baseline first).

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	Time      string         `xml:"time,attr"`
	Skipped   *junitMessage  `xml:"skipped"`
	Error     *junitProblem  `xml:"error"`
	Failures  []junitProblem `xml:"failure"`
	SystemOut *junitText     `xml:"system-out"`
}

// junitText is element text as CDATA: evidence keeps its lines readable.
type junitText struct {
	Text string `xml:",cdata"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// WriteJUnit writes the report as JUnit XML: a scenario with error
// findings is a testcase with one failure per finding (the evidence and the
// repro line in its text), an indeterminate scenario is skipped with why,
// warnings and notes go to its system-out, and a run that ended in error
// (the target could not be tested) is a testcase in error.
func WriteJUnit(w io.Writer, r *Report) error {
	suite := junitSuite{Name: "mcpchaos " + targetWords(r.Target),
		Properties: []junitProperty{{"seed", fmt.Sprint(r.Seed)}, {"target", targetWords(r.Target)}, {"outcome", r.Outcome}}}
	if r.Tool.Version != "" {
		suite.Properties = append(suite.Properties, junitProperty{"mcpchaos", r.Tool.Version})
	}
	classname := "mcpchaos." + junitClass(r.Target)
	var total int64
	for _, s := range tableRows(r) {
		c := junitCase{Name: s.label(orDash(s.Name)), Classname: classname, Time: seconds(s.DurationMS)}
		total += s.DurationMS
		var out []string
		for _, f := range r.Findings {
			if f.Scenario != s.Name {
				continue
			}
			text := findingText(&f)
			if !f.Fails() {
				out = append(out, text)
				continue
			}
			c.Failures = append(c.Failures, junitProblem{Message: f.Message, Type: junitType(&f), Text: xmlSafe(text)})
		}
		if s.Outcome == OutcomeIndeterminate && len(c.Failures) == 0 {
			c.Skipped = &junitMessage{Message: "indeterminate: " + strings.Join(s.Indeterminate, "; ")}
			suite.Skipped++
		}
		out = append(out, s.Notes...)
		if len(out) > 0 {
			c.SystemOut = &junitText{xmlSafe(strings.Join(out, "\n\n"))}
		}
		if len(c.Failures) > 0 {
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	if len(r.StaleBaseline) > 0 {
		c := junitCase{Name: "baseline entries", Classname: classname, Time: "0"}
		for _, fp := range r.StaleBaseline {
			c.Failures = append(c.Failures, junitProblem{Message: staleWords(fp, r.BaselineFile), Type: "stale-baseline", Text: xmlSafe(staleWords(fp, r.BaselineFile))})
		}
		suite.Cases = append(suite.Cases, c)
		suite.Failures++
	}
	if r.Outcome == OutcomeError {
		why := r.Error
		if why == "" {
			why = "the run ended in error"
		}
		suite.Cases = append(suite.Cases, junitCase{Name: "set-up", Classname: classname, Time: "0",
			Error: &junitProblem{Message: why, Type: "setup", Text: why}})
		suite.Errors++
	}
	suite.Tests, suite.Time = len(suite.Cases), seconds(total)
	// The skipped count is the testsuite's: junit-10.xsd has none on
	// testsuites.
	doc := junitSuites{Name: "mcpchaos", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// findingText is a finding as plain text: what the terminal summary shows.
func findingText(f *Finding) string {
	var b strings.Builder
	writeFinding(&b, f)
	return strings.TrimSuffix(b.String(), "\n")
}

// junitType is a failure's type: the finding kind, and a crash's
// signature, which is what tells one failure from another.
func junitType(f *Finding) string {
	if f.Signature != "" {
		return f.Kind + " " + f.Signature
	}
	return f.Kind
}

// junitClass names the target for the testcases' classname: its program's
// base name, or the URL's host, in characters test-report tools keep.
func junitClass(t Target) string {
	s := t.URL
	if len(t.Command) > 0 {
		s = t.Command[0]
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			s = s[i+1:]
		}
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "http://"), "https://")
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "target"
	}
	return b.String()
}

// xmlSafe replaces what XML 1.0 cannot hold (control characters, such as
// the colour codes of a peer's stderr) with U+FFFD: CDATA is written as
// it is, and one such byte would make the whole file unreadable.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF {
			return r
		}
		return '\uFFFD'
	}, s)
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }
