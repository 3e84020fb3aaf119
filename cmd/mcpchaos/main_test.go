package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/wire"
)

// The test binary doubles as mcpchaos itself (MCPCHAOS_TEST_MAIN) and as a
// line-echoing stdio server (MCPCHAOS_TEST_CAT), so the CLI is tested as a
// user runs it without building anything.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("MCPCHAOS_TEST_MAIN") != "":
		os.Unsetenv("MCPCHAOS_TEST_MAIN") // the server it starts is the cat
		main()
	case os.Getenv("MCPCHAOS_TEST_CAT") != "":
		io.Copy(os.Stdout, os.Stdin)
		os.Exit(0)
	}
	code := m.Run()
	if examples.dir != "" { // built once for every test that wants them (exampleBin)
		os.RemoveAll(examples.dir)
	}
	os.Exit(code)
}

// usageCase is a command line mcpchaos must refuse: exit 2, and want in
// what it says on stderr.
type usageCase struct {
	name string
	args []string
	want string
}

func checkUsageErrors(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, strings.NewReader(""), &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.want)
			}
		})
	}
}

func catServer(t *testing.T) []string {
	t.Setenv("MCPCHAOS_TEST_CAT", "1")
	// A race-enabled binary sleeps a second at exit by default; the
	// helpers' exits are what these tests time.
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	return []string{os.Args[0]}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	transcript := filepath.Join(dir, "t.jsonl")
	notExecutable := filepath.Join(dir, "server.py")
	if err := os.WriteFile(notExecutable, []byte("print('hi')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // a substring of the one stderr line
	}{
		{"no command", nil, "Usage:"},
		{"unknown command", []string{"wrapp"}, `unknown command "wrapp"`},
		{"wrap without --", []string{"wrap", "--seed", "1"}, "no server command; put it after --"},
		{"wrap with nothing after --", []string{"wrap", "--"}, "no server command"},
		{"wrap with a stray argument", []string{"wrap", "python", "--", "x"}, `unexpected argument "python" before --`},
		{"unknown flag", []string{"wrap", "--faults", "eof", "--", "cat"}, "unknown flag: --faults"},
		{"bad seed", []string{"wrap", "--seed", "abc", "--", "cat"}, "--seed"},
		{"unknown fault", []string{"wrap", "--fault", "stal", "--transcript", transcript, "--", "cat"}, `unknown fault "stal" (did you mean "stall"?)`},
		{"malformed fault", []string{"wrap", "--fault", "burst:count=many", "--", "cat"}, `count: "many" is not a whole number`},
		{"missing command", []string{"wrap", "--transcript", transcript, "--", "mcpchaos-no-such-server"}, `cannot start "mcpchaos-no-such-server": command not found (is it installed and on PATH?)`},
		{"not executable", []string{"wrap", "--", notExecutable}, "permission denied (is the file executable?)"},
		{"bad grace", []string{"wrap", "--grace", "-1s", "--", "cat"}, "--grace must be positive"},
		{"proxy without upstream", []string{"proxy"}, "no --upstream"},
		{"proxy with a bad upstream", []string{"proxy", "--upstream", "localhost:3000"}, `--upstream "localhost:3000" is not an http:// or https:// URL`},
		{"proxy on a remote address", []string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "0.0.0.0:8931"}, "is not a loopback address"},
		{"proxy with a stdio-only fault", []string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--fault", "half-close"}, "fault half-close has no meaning on HTTP"},
		{"proxy to nothing", []string{"proxy", "--upstream", "http://127.0.0.1:1/mcp", "--transcript", transcript}, "cannot be reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.want)
			}
			if tc.args != nil && strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
				t.Errorf("stderr has more than one line: %q", stderr.String())
			}
			if _, err := os.Stat(transcript); err == nil {
				t.Errorf("a failed start left a transcript behind")
			}
		})
	}
}

func TestWrapRelaysAndWritesTheTranscript(t *testing.T) {
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":7}}}` + "\n" + "not json\n"
	args := append([]string{"wrap", "--seed", "9", "--transcript", transcript, "--fault", "burst:on=c2s:request,dir=s2c,count=2", "--"}, catServer(t)...)
	stdinR, stdinW, _ := os.Pipe()
	stdoutR, stdoutW, _ := os.Pipe()
	go func() {
		stdinW.WriteString(in)
		stdinW.Close()
	}()
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() { code <- run(args, stdinR, stdoutW, &stderr) }()
	out, _ := io.ReadAll(stdoutR)
	if c := <-code; c != exitOK {
		t.Fatalf("exit %d, stderr %q", c, stderr.String())
	}
	if !strings.Contains(stderr.String(), "seed 9") {
		t.Errorf("the seed is not printed: %q", stderr.String())
	}
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":%d,"total":2,"message":"mcpchaos burst"}}` + "\n"
	want := strings.ReplaceAll(progress, "%d", "1") + strings.ReplaceAll(progress, "%d", "2") + in
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("client output (-want +got):\n%s", diff)
	}
	events := readTranscript(t, transcript)
	if events[0].Type != wire.EventSession || *events[0].Seed != 9 || events[len(events)-1].Type != wire.EventSessionEnd {
		t.Errorf("transcript does not run from session to session-end: first %+v, last %+v", events[0], events[len(events)-1])
	}
}

// SIGTERM to mcpchaos runs the shutdown ladder and still writes a complete
// transcript.
func TestSIGTERMStillWritesTheTranscript(t *testing.T) {
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	cmd := exec.Command(os.Args[0], append([]string{"wrap", "-q", "--transcript", transcript, "--"}, catServer(t)...)...)
	cmd.Env = append(os.Environ(), "MCPCHAOS_TEST_MAIN=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil { // relayed both ways: it is up
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mcpchaos exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("mcpchaos did not exit within 15s of SIGTERM")
	}
	events := readTranscript(t, transcript)
	last := events[len(events)-1]
	if last.Type != wire.EventSessionEnd || last.Detail != "interrupted: got SIGTERM" {
		t.Errorf("last event %+v, want session-end after an interruption", last)
	}
}

func TestFaultsListsEveryFamily(t *testing.T) {
	var stdout bytes.Buffer
	if code := run([]string{"faults"}, nil, &stdout, io.Discard); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, name := range []string{"stall:", "burst:", "eof:", "half-close:", "inflight=int", "example: --fault"} {
		if !strings.Contains(stdout.String(), name) {
			t.Errorf("mcpchaos faults does not mention %q", name)
		}
	}
}

func readTranscript(t *testing.T, path string) []wire.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []wire.Event
	if err := wire.ReadTranscript(f, func(e wire.Event) error { events = append(events, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		t.Fatal("empty transcript")
	}
	return events
}

// wrap --report judges the session when it ends: a server that panics on
// its way out is a crash with its signature, and the exit status says so.
func TestWrapReport(t *testing.T) {
	dir := t.TempDir()
	reportPath := filepath.Join(dir, "report.json")
	server := []string{"sh", "-c", `read line; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; echo 'panic: boom' >&2; echo 'goroutine 1 [running]:' >&2; exit 2`}
	args := append([]string{"wrap", "-q", "--report", reportPath, "--"}, server...)
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), &stdout, &stderr)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitFindings, stderr.String())
	}
	report := readReportFile(t, reportPath)
	var got []string
	for _, fd := range report.Findings {
		got = append(got, fd.Kind+" "+fd.Signature)
	}
	if diff := cmp.Diff([]string{"crash go:panic"}, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(report.Findings[0].Repro, "mcpchaos wrap --seed ") {
		t.Errorf("repro = %q", report.Findings[0].Repro)
	}
}
