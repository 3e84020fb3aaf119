package main

import (
	"bytes"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// freeAddr is a loopback address nothing listens on (for a moment).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestTestURLUsageErrors(t *testing.T) {
	addr := freeAddr(t)
	checkUsageErrors(t, []usageCase{
		{"not a URL scheme", []string{"test", "--url", "localhost:3000/mcp"}, "give the server's MCP endpoint as an http:// or https:// URL"},
		{"no host", []string{"test", "--url", "http:///mcp"}, "has no host"},
		{"bad header", []string{"test", "--url", "http://" + addr + "/mcp", "--header", "Authorization"}, "--header \"Authorization\": write NAME:VALUE"},
		{"header without --url", []string{"test", "--header", "A: b", "--", "cat"}, "--header goes with --url"},
		{"start-timeout without a command", []string{"test", "--url", "http://" + addr + "/mcp", "--start-timeout", "5s"}, "there is no command"},
		{"a stdio-only fault", []string{"test", "--url", "http://" + addr + "/mcp", "--fault", "half-close"}, "half-close"},
		{"nothing listening", []string{"test", "--url", "http://" + addr + "/mcp"}, "nothing answers at http://" + addr + "/mcp"},
		{"a server that never listens", []string{"test", "--url", "http://" + addr + "/mcp", "--start-timeout", "1s", "--", "sh", "-c", "echo starting >&2; exec sleep 30"},
			"nothing listened on " + addr + " within 1s"},
		{"--parallel with a command", []string{"test", "--url", "http://" + addr + "/mcp", "--parallel", "2", "--", "server"}, "--parallel 2: each scenario starts the server from the command after -- on the port of --url"},
		{"a server that exits", []string{"test", "--url", "http://" + addr + "/mcp", "--", "sh", "-c", "echo no config >&2; exit 1"},
			"the server exited (status 1) before it listened"},
		// Issue 42: {port}, a port for each run.
		{"{port} without a command", []string{"test", "--url", "http://127.0.0.1:{port}/mcp"}, "{port} is a port mcpchaos picks for each run and starts the server on, so give the server's command (the command after --)"},
		{"{port} in the path", []string{"test", "--url", "http://127.0.0.1/{port}/mcp", "--", "server"}, "{port} stands for the port, after the host and a colon"},
		{"{port} twice", []string{"test", "--url", "http://127.0.0.1:{port}/{port}", "--", "server"}, "write {port} once"},
		{"--parallel with a command, said how to get it", []string{"test", "--url", "http://" + addr + "/mcp", "--parallel", "2", "--", "server"}, "write the port as {port} (a port for each run)"},
		{"{port} with a replay of cases", []string{"test", "--url", "http://127.0.0.1:{port}/mcp", "--cases", t.TempDir(), "--", "server"}, "{port} (a port for each run) is not taken by a replay of cases"},
	})
}

// test --url -- CMD starts the bundled example server on HTTP for each
// scenario, probes it through the proxy, stops it with SIGTERM, and finds
// nothing; the report names the URL, and the stored transcripts judge the
// same offline.
func TestTestURLStartsTheServer(t *testing.T) {
	t.Setenv("MCPCHAOS_TEST_MAIN", "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	addr := freeAddr(t)
	dir := t.TempDir()
	reportPath := filepath.Join(dir, "report.json")
	var stdout, stderr bytes.Buffer
	args := []string{"test", "--url", "http://" + addr + "/mcp", "--seed", "3", "--report", reportPath,
		"--transcript-dir", dir, "--", os.Args[0], "serve", "--http", addr}
	if code := run(args, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	rep := readReportFile(t, reportPath)
	if rep.Target.URL != "http://"+addr+"/mcp" || rep.Outcome != "pass" || len(rep.Scenarios) != len(faults.HTTPServerScenariosFor(&url.URL{Scheme: "http", Host: addr}, false)) {
		t.Errorf("report: target %+v, outcome %s, %d scenarios\n%s", rep.Target, rep.Outcome, len(rep.Scenarios), stdout.String())
	}
	for _, sc := range rep.Scenarios {
		if sc.Outcome != "pass" {
			t.Errorf("%s: %s (%v)", sc.Name, sc.Outcome, sc.Indeterminate)
		}
	}
	if checkJudgedAgain(t, rep, dir) == 0 {
		t.Error("no transcript stores a server's event as it came: the judging again did not read that format")
	}
	if want := []string{os.Args[0], "serve", "--http", addr}; !cmp.Equal(want, rep.Target.Command) {
		t.Errorf("target command %q, want %q", rep.Target.Command, want)
	}
}

// checkJudgedAgain judges each scenario's transcript of rep again with
// mcpchaos judge, and wants the live verdict. It says how many of the
// server's events the transcripts store as they came after a line (format
// 3), as the proxy stores those no fault could touch.
func checkJudgedAgain(t *testing.T, rep *reports.Report, dir string) (asWritten int) {
	t.Helper()
	for _, sc := range rep.Scenarios {
		// A scenario of several sessions is judged from every session's
		// transcript at once, as its run judged them.
		paths := sc.Transcripts
		if len(paths) == 0 {
			paths = []string{sc.Transcript}
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			asWritten += bytes.Count(data, []byte(`"frames":1,"forwarded":true`))
		}
		out := filepath.Join(dir, sc.Name+".offline.json")
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"judge", "--report", out}, paths...), nil, &stdout, &stderr); code != exitOK && code != exitFindings {
			t.Errorf("judge %s: exit %d\n%s%s", sc.Name, code, stdout.String(), stderr.String())
			continue
		}
		var findings []reports.Finding
		for _, f := range rep.Findings {
			if f.Scenario == sc.Name {
				findings = append(findings, f)
			}
		}
		live := verdict{Outcome: sc.Outcome, Findings: findings, Notes: sc.Notes}
		if diff := cmp.Diff(live, verdictOf(t, readReportFile(t, out)), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s judged again (-live +offline):\n%s", sc.Name, diff)
		}
	}
	return asWritten
}

// A run with findings over HTTP judges the same offline: cancel-panic's
// crash under cancel-race, and closed-session's under
// end-session-inflight (examples/httpservers).
func TestTestURLFindingsJudgeTheSameOffline(t *testing.T) {
	for _, tc := range []struct{ server, scenario string }{
		{"cancel-panic", "cancel-race"},
		{"closed-session", "end-session-inflight"},
	} {
		t.Run(tc.server, func(t *testing.T) {
			bin := exampleBin(t, "httpservers/"+tc.server)
			addr := freeAddr(t)
			dir := t.TempDir()
			reportPath := filepath.Join(dir, "report.json")
			var stdout, stderr bytes.Buffer
			args := []string{"test", "--url", "http://" + addr + "/mcp", "--scenario", tc.scenario, "--seed", "1", "--deadline", "3s",
				"--report", reportPath, "--transcript-dir", dir, "--", bin, "--addr", addr}
			if code := run(args, nil, &stdout, &stderr); code != exitFindings {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFindings, stdout.String(), stderr.String())
			}
			checkJudgedAgain(t, readReportFile(t, reportPath), dir)
		})
	}
}

func TestTestClientServerURLUsageErrors(t *testing.T) {
	addr := freeAddr(t)
	u := "http://" + addr + "/mcp"
	checkUsageErrors(t, []usageCase{
		{"not a URL", []string{"test-client", "--server-url", "localhost:3000", "--", "client"}, "give the server's MCP endpoint as an http:// or https:// URL"},
		{"start-timeout without --server-url", []string{"test-client", "--start-timeout", "5s", "--", "client"}, "there is no --server-url"},
		{"start-timeout without --server", []string{"test-client", "--server-url", u, "--start-timeout", "5s", "--", "client"}, "there is no --server"},
		{"--parallel with --server", []string{"test-client", "--server-url", u, "--server", "server", "--parallel", "2", "--", "client"}, "--parallel 2: each scenario starts the server from --server on the port of --server-url"},
		{"cases with a bad URL", []string{"test-client", "--server-url", "localhost:1", "--cases", t.TempDir()}, "test-client: --server-url \"localhost:1\": give the server's MCP endpoint"},
		{"{port} without --server", []string{"test-client", "--server-url", "http://127.0.0.1:{port}/mcp", "--", "client"}, "so give the server's command (--server), with {port} or $PORT"},
		{"{port} in a replay of cases", []string{"test-client", "--server-url", "http://127.0.0.1:{port}/mcp", "--cases", t.TempDir()}, "{port} (a port for each run) is not taken by a replay of cases"},
		{"a stdio-only fault", []string{"test-client", "--server-url", u, "--fault", "half-close", "--", "sh", "-c", "exit 0"}, "fault half-close has no meaning on HTTP"},
		{"nothing listening", []string{"test-client", "--server-url", u, "--", "sh", "-c", "exit 0"}, "nothing answers at " + u},
		{"an HTTP-only fault on stdio (test-client)", []string{"test-client", "--fault", "reset", "--", "sh", "-c", "exit 0"}, "fault reset works only on HTTP"},
		{"an HTTP-only fault on stdio (test)", []string{"test", "--fault", "end-session", "--", "cat"}, "fault end-session works only on HTTP"},
		{"an HTTP-only fault on stdio (wrap)", []string{"wrap", "--fault", "http-error", "--", "cat"}, "fault http-error works only on HTTP"},
		{"an HTTP-only parameter on stdio (test)", []string{"test", "--fault", "eof:stream=get", "--", "cat"}, "stream= means something on HTTP only"},
		{"an HTTP-only parameter on stdio (wrap)", []string{"wrap", "--fault", "eof:server=read", "--", "cat"}, "server= means something on HTTP only"},
	})
}

// replayCase is a replay of saved cases: the flags after the prefix, the
// exit status, and a line of its output.
type replayCase struct {
	name string
	args []string
	code int
	want string
}

func checkReplays(t *testing.T, prefix []string, cases []replayCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append(slices.Clone(prefix), tc.args...), nil, &stdout, &stderr); code != tc.code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.want) {
				t.Errorf("stdout lacks %q:\n%s", tc.want, stdout.String())
			}
		})
	}
}

// test --url --save-case writes a case that records the URL and the
// command serving it; test --cases replays it against that recorded
// server (it still fails the same way) and, given the fixed twin after --,
// passes. The planted bug: cancel-panic's cancellation of a finished call
// panics in a handler (examples/httpservers/cancel-panic).
func TestTestURLSaveCaseAndReplay(t *testing.T) {
	bin := exampleBin(t, "httpservers/cancel-panic")
	addr := freeAddr(t)
	u := "http://" + addr + "/mcp"
	cases := filepath.Join(t.TempDir(), "cases")
	var stdout, stderr bytes.Buffer
	args := []string{"test", "--url", u, "--scenario", "cancel-race", "--seed", "1", "--deadline", "3s", "--save-case", cases, "--", bin, "--addr", addr}
	if code := run(args, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	file := filepath.Join(cases, "cancel-race-seed1.yaml")
	c, err := faults.ReadCaseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != u || !cmp.Equal(c.Command, []string{bin, "--addr", addr}) || c.Client || !cmp.Equal(c.Findings, []string{"crash"}) {
		t.Errorf("case: url %q, command %q, client %v, findings %q", c.URL, c.Command, c.Client, c.Findings)
	}
	checkReplays(t, []string{"test", "--cases", cases}, []replayCase{
		{"the recorded server", nil, 1, "STILL FAILS  " + file + ": the same way (crash)\n"},
		{"the fixed twin", []string{"--url", u, "--", bin, "--addr", addr, "--fixed"}, 0, "PASSES       " + file + ": no longer fails (was crash)\n"},
	})
}

// test-client --server-url --save-case and --cases: the planted-bug
// client that keeps using an expired session (examples/httpclients/
// stale-session) is saved as a case, still fails when replayed, and its
// fixed twin passes it; the server is the bundled one on HTTP, started per
// scenario.
func TestTestClientServerURLSaveCaseAndReplay(t *testing.T) {
	t.Setenv("MCPCHAOS_TEST_MAIN", "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	client := exampleBin(t, "httpclients/stale-session")
	addr := freeAddr(t)
	u := "http://" + addr + "/mcp"
	server := os.Args[0] + " serve --http " + addr
	cases := filepath.Join(t.TempDir(), "cases")
	var stdout, stderr bytes.Buffer
	args := []string{"test-client", "--server-url", u, "--server", server, "--scenario", "session-expired", "--seed", "2", "--deadline", "4s", "--hang-after", "4s", "--save-case", cases, "--", client}
	if code := run(args, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	file := filepath.Join(cases, "session-expired-seed2.yaml")
	c, err := faults.ReadCaseFile(file)
	if err != nil {
		entries, _ := os.ReadDir(cases)
		t.Fatalf("%v (the directory holds %v)\n%s", err, entries, stdout.String())
	}
	if c.URL != u || !c.Client || !cmp.Equal(c.Command, []string{client}) || !cmp.Equal(c.Server, []string{os.Args[0], "serve", "--http", addr}) || !cmp.Equal(c.Findings, []string{"hang", "protocol-violation"}) {
		t.Errorf("case: url %q, client %v %q, server %q, findings %q", c.URL, c.Client, c.Command, c.Server, c.Findings)
	}
	checkReplays(t, []string{"test-client", "--cases", cases}, []replayCase{
		{"the recorded client", nil, 1, "STILL FAILS  " + file + ": the same way (hang, protocol-violation)\n"},
		{"the fixed twin", []string{"--", client, "--fixed"}, 0, "PASSES       " + file + ": no longer fails (was hang, protocol-violation)\n"},
	})
}
