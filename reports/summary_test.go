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
