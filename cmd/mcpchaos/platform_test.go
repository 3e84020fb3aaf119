package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/chaos"
)

// On Windows, what relays a stdio session is refused with exit status 2 and
// one message: what is not supported, why, what works instead, and where
// to read more. The message is checked here on any OS, by making the CLI
// believe it runs where stdio sessions cannot.
func TestStdioCommandsRefusedWhereUnsupported(t *testing.T) {
	saved := stdioSupported
	t.Cleanup(func() { stdioSupported = saved })
	stdioSupported = func() error { return chaos.ErrStdioUnsupported }
	for _, tc := range []struct {
		args []string
		what string
	}{
		{[]string{"wrap", "--", "server"}, "mcpchaos wrap"},
		{[]string{"wrap", "--fault", "stall", "--", "server"}, "mcpchaos wrap"},
		{[]string{"test"}, "mcpchaos test without --url (a stdio server)"},
		{[]string{"test", "--", "python", "server.py"}, "mcpchaos test without --url (a stdio server)"},
		{[]string{"test-client", "--", "client"}, "mcpchaos test-client without --server-url (a client of a stdio server)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, strings.NewReader(""), &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if got, want := stderr.String(), stdioRefusal(tc.what); got != want {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
	// --help still works there.
	var stdout bytes.Buffer
	if code := run([]string{"wrap", "--help"}, strings.NewReader(""), &stdout, &bytes.Buffer{}); code != exitOK || !strings.Contains(stdout.String(), "Usage: mcpchaos wrap") {
		t.Errorf("wrap --help: exit %d, stdout %q", code, stdout.String())
	}
}

// The words a Windows user sees, in full.
func TestStdioRefusalWords(t *testing.T) {
	want := "mcpchaos: mcpchaos wrap is not supported on Windows: it relays a stdio MCP session, which needs process groups and POSIX signals (the SIGTERM/SIGKILL shutdown ladder, signal faults) that Windows lacks.\n" +
		"  On Windows, use mcpchaos test --url URL (an HTTP MCP server, running or started with -- CMD), proxy, test-client --server-url URL, judge, report, serve, faults, scenarios or version; or run mcpchaos under WSL.\n" +
		"  See docs/platforms.md.\n"
	if got := stdioRefusal("mcpchaos wrap"); got != want {
		t.Errorf("stdioRefusal:\n%s\nwant:\n%s", got, want)
	}
	// A stdio session refused deeper down (a case recorded over stdio,
	// replayed there) says the same.
	var stderr bytes.Buffer
	if code := runFailed(&stderr, "test", "server", fmt.Errorf("cases: %w", chaos.ErrStdioUnsupported)); code != exitUsage {
		t.Errorf("runFailed: exit %d, want %d", code, exitUsage)
	}
	if got, want := stderr.String(), stdioRefusal("mcpchaos test over stdio"); got != want {
		t.Errorf("runFailed:\n%s\nwant:\n%s", got, want)
	}
	// docs/platforms.md quotes it as printed.
	doc, err := os.ReadFile("../../docs/platforms.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), want) {
		t.Errorf("docs/platforms.md does not quote the refusal as wrap prints it:\n%s", want)
	}
}

// Where stdio sessions run (everywhere but Windows), nothing is refused.
func TestStdioSupportedHere(t *testing.T) {
	err := chaos.StdioSupported()
	if (runtime.GOOS == "windows") != (err != nil) {
		t.Errorf("chaos.StdioSupported() on %s = %v", runtime.GOOS, err)
	}
	var stderr bytes.Buffer
	if _, refused := refuseStdio(&stderr, "mcpchaos wrap"); refused != (err != nil) || refused != (stderr.Len() > 0) {
		t.Errorf("refuseStdio on %s: refused %v, stderr %q", runtime.GOOS, refused, stderr.String())
	}
}
