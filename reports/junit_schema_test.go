package reports

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The JUnit rendering is valid against the JUnit schema of Jenkins' xunit
// plugin (junit-10.xsd, what GitLab, Jenkins and the test-report actions
// read), checked with a real XSD validator (xmlschema, from PyPI; both
// installed by scripts/install-tools): a run that fails, one that ended in
// error, and one whose evidence holds a peer's control characters. A file
// the schema refuses is refused, so the check can fail.
func TestJUnitValidAgainstTheSchema(t *testing.T) {
	tools, err := filepath.Abs(filepath.Join("..", ".tools"))
	if err != nil {
		t.Fatal(err)
	}
	python, xsd := filepath.Join(tools, "py", "bin", "python"), filepath.Join(tools, "junit-10.xsd")
	for _, p := range []string{python, xsd} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%v: run scripts/install-tools first (xmlschema and the JUnit schema, from PyPI)", err)
		}
	}
	validate := func(xml []byte) error {
		path := filepath.Join(t.TempDir(), "junit.xml")
		if err := os.WriteFile(path, xml, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, python, "-c", "import sys, xmlschema; xmlschema.validate(sys.argv[1], sys.argv[2])", path, xsd).CombinedOutput()
		if err != nil {
			return &schemaError{string(out)}
		}
		return nil
	}
	colour := sampleReport(t)
	colour.Findings[1].Evidence[0].Excerpt = "\x1b[31mTraceback\x1b[0m\x00 ]]> end"
	for name, r := range map[string]*Report{
		"a failing run":      sampleReport(t),
		"a run in error":     {Outcome: OutcomeError, Error: "the server exited (status 1) before it answered initialize"},
		"stderr in colour":   colour,
		"an empty run":       {Outcome: OutcomePass},
		"a baseline failing": {Outcome: OutcomeFail, Baseline: &ScenarioResult{Name: "baseline", Outcome: OutcomeFail, Findings: 1}, Findings: []Finding{{Kind: KindHang, Severity: SeverityError, Scenario: "baseline", Message: "hang"}}},
	} {
		var buf bytes.Buffer
		if err := WriteJUnit(&buf, r); err != nil {
			t.Fatal(err)
		}
		if err := validate(buf.Bytes()); err != nil {
			t.Errorf("%s: the JUnit XML is not valid against junit-10.xsd: %v\n%s", name, err, buf.String())
		}
	}
	if err := validate([]byte(`<testsuites><testsuite><testcase/></testsuite></testsuites>`)); err == nil {
		t.Error("the validator accepted a testsuite with no name: it checks nothing")
	}
}

type schemaError struct{ out string }

// Error is the validator's reason and where, not the document it echoes.
func (e *schemaError) Error() string {
	var keep []string
	for _, l := range strings.Split(e.out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "Reason:") || strings.HasPrefix(l, "Path:") || strings.Contains(l, "Error") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return strings.TrimSpace(e.out)
	}
	return strings.Join(keep, "; ")
}
