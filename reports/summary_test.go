package reports

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Two crashes printed in one exception group share one stderr excerpt; the
// summary must show each finding the end of its own traceback, not both the
// tail of the group.
func TestSummaryShowsEachCrashItsOwnException(t *testing.T) {
	raw, err := os.ReadFile("../judge/testdata/stderr/python_two_leaves_group.txt")
	if err != nil {
		t.Fatal(err)
	}
	excerpt := strings.TrimRight(string(raw), "\n")
	for _, sig := range []string{"python:RuntimeError:dictionary changed size during iteration", "python:ClosedResourceError"} {
		word := signatureWord(sig)
		lines := excerptLines(excerpt, word)
		last := lines[len(lines)-1]
		if strings.HasPrefix(last, "… (") {
			last = lines[len(lines)-2]
		}
		if !strings.Contains(last, word) {
			t.Errorf("%s: the excerpt shown ends with %q, want the line naming %s:\n%s", sig, last, word, strings.Join(lines, "\n"))
		}
	}
}

func TestSignatureWord(t *testing.T) {
	got := map[string]string{}
	for _, sig := range []string{"python:RuntimeError:dictionary changed size during iteration", "python:ClosedResourceError", "go:panic", "node:Error:EPIPE", "exit:1", "signal:SIGSEGV", ""} {
		got[sig] = signatureWord(sig)
	}
	want := map[string]string{
		"python:RuntimeError:dictionary changed size during iteration": "RuntimeError",
		"python:ClosedResourceError":                                   "ClosedResourceError",
		"go:panic":                                                     "panic: ",
		"node:Error:EPIPE":                                             "Error",
		"exit:1":                                                       "",
		"signal:SIGSEGV":                                               "",
		"":                                                             "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("signatureWord (-want +got):\n%s", diff)
	}
}

// What a peer sent reaches the summary as text on its own lines: a tool's
// error with a line break (tavily-mcp 0.2.22 answers "...ENOTFOUND
// api.tavily.com\nDocumentation: ..."), or a frame or a stderr line with
// an escape sequence, must neither break the summary's layout nor send
// control codes to the user's terminal.
func TestSummaryKeepsPeersTextToItsLines(t *testing.T) {
	r := &Report{
		Scenarios: []ScenarioResult{{Name: "baseline", Outcome: OutcomeFail, Findings: 1, Notes: []string{
			"1 tool answered with a tool error: tavily_search (Tavily API error: getaddrinfo ENOTFOUND api.tavily.com\nDocumentation: https://docs.tavily.com)",
		}}},
		Findings: []Finding{{Kind: KindCrash, Severity: SeverityError, Scenario: "baseline", Signature: "python:Error\x1b[8m",
			Message:  "the server crashed: \x1b[2Jhidden\r\nover",
			Request:  &Request{Method: "tools/call", Tool: "x\x07", ID: "1"},
			Evidence: []Evidence{{Seq: 3, Type: "stderr", Excerpt: "Traceback\n\x1b]52;c;aGk=\x07Error: boom\u202e"}}}},
	}
	var b strings.Builder
	WriteSummary(&b, r)
	out := b.String()
	for i, c := range []byte(out) {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			t.Fatalf("the summary holds control byte %#x at %d:\n%s", c, i, out)
		}
	}
	if strings.Contains(out, "\u202e") {
		t.Errorf("the summary holds a bidirectional-text override:\n%s", out)
	}
	for _, want := range []string{
		"       - 1 tool answered with a tool error: tavily_search (Tavily API error: getaddrinfo ENOTFOUND api.tavily.com Documentation: https://docs.tavily.com)\n",
		`  the server crashed: \x1b[2Jhidden over` + "\n",
		`    | \x1b]52;c;aGk=\x07Error: boom\u202e` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary does not hold the line %q:\n%s", want, out)
		}
	}
}
