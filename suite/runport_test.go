package suite

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Issue 42: {port} in --url stands for a port picked for each run.
func TestParseURLTemplate(t *testing.T) {
	for _, tc := range []struct {
		in, shown string
		perRun    bool
		err       string
	}{
		{in: "http://127.0.0.1:3000/mcp", shown: "http://127.0.0.1:3000/mcp"},
		{in: "http://127.0.0.1:{port}/mcp", shown: "http://127.0.0.1:{port}/mcp", perRun: true},
		{in: "http://[::1]:{port}/mcp?x=1", shown: "http://[::1]:{port}/mcp?x=1", perRun: true},
		{in: "http://u:secret@localhost:{port}/mcp", shown: "http://u:xxxxx@localhost:{port}/mcp", perRun: true},
		{in: "http://127.0.0.1:{port}/{port}", err: "write {port} once"},
		{in: "http://127.0.0.1/mcp?p={port}", err: "{port} stands for the port"},
	} {
		u, perRun, err := ParseURLTemplate(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURLTemplate(%q) err = %v; want one saying %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || perRun != tc.perRun {
			t.Errorf("ParseURLTemplate(%q) = perRun %v, err %v; want perRun %v", tc.in, perRun, err, tc.perRun)
			continue
		}
		shown := u.Redacted()
		if perRun {
			shown = URLTemplate(u)
		}
		if shown != tc.shown {
			t.Errorf("ParseURLTemplate(%q) shown as %q; want %q", tc.in, shown, tc.shown)
		}
	}
}

func TestOnFreshPortPutsThePortInTheURLTheCommandAndPORT(t *testing.T) {
	u, _, err := ParseURLTemplate("http://127.0.0.1:{port}/mcp")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{URL: u, PortPerRun: true, Command: []string{"server", "--listen=127.0.0.1:{port}", "--name", "x"}}
	run, err := o.onFreshPort()
	if err != nil {
		t.Fatal(err)
	}
	p := run.URL.Port()
	if p == "0" || p == "" {
		t.Fatalf("run URL %s has no port picked", run.URL)
	}
	if diff := cmp.Diff([]string{"server", "--listen=127.0.0.1:" + p, "--name", "x"}, run.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	if !slices.Contains(run.runEnv, "PORT="+p) {
		t.Errorf("the server's environment has no PORT=%s", p)
	}
	if o.URL.Port() != "0" || o.Command[1] != "--listen=127.0.0.1:{port}" {
		t.Errorf("the options' own URL or command changed: %s %q", o.URL, o.Command)
	}
	command, caseURL := run.caseTarget()
	if caseURL != "http://127.0.0.1:{port}/mcp" || command[1] != "--listen=127.0.0.1:{port}" {
		t.Errorf("a case records %q %q; want the URL and command as written, {port} and all", caseURL, command)
	}
}

// The matrix over HTTP runs side by side with {port}, each run its own
// server; a port picked and then found held by another process is picked
// again, never held against the server.
func TestAPortForEachRunRunsTheHTTPMatrixSideBySide(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("who holds a port is told on Linux only (internal/portowner)")
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := held.Addr().(*net.TCPAddr).Port
	picked := make(chan int, 64)
	var first atomic.Bool
	first.Store(true)
	pickPort = func(host string) (int, error) {
		p, err := freePort(host)
		if first.CompareAndSwap(true, false) {
			// The first run's port is one another process holds.
			p = heldPort
		}
		picked <- p
		return p, err
	}
	t.Cleanup(func() { pickPort = freePort })
	u, _, _ := ParseURLTemplate("http://127.0.0.1:{port}/mcp")
	scs, err := faults.SelectScenarios(faults.HTTPServerScenarios(), []string{"cut-before-result", "cut-inflight", "stall-streams"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	report, err := Run(ctx, Options{Command: []string{mcpchaosBin, "serve", "--http", "127.0.0.1:{port}"}, URL: u, PortPerRun: true,
		Scenarios: scs, Seed: 1, Deadline: 3 * time.Second, Grace: time.Second, Parallel: 4, TranscriptDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	close(picked)
	ports := map[int]bool{}
	for p := range picked {
		ports[p] = true
	}
	// The baseline and three scenarios, one of them made again.
	if len(ports) != 5 || !ports[heldPort] {
		t.Errorf("ports picked %v; want 5 distinct, the held %d among them", ports, heldPort)
	}
	if report.Target.URL != "http://127.0.0.1:{port}/mcp" {
		t.Errorf("report target URL %q; want it as written", report.Target.URL)
	}
	if report.Outcome != reports.OutcomePass {
		for _, f := range report.Findings {
			t.Errorf("finding: %s %s: %s", f.Scenario, f.Rule, f.Message)
		}
		for _, s := range report.Scenarios {
			t.Logf("%s %s %q", s.Name, s.Outcome, s.Indeterminate)
		}
	}
	// Each run's session event names the URL as written, so that the
	// runs on their several ports are judged again as one target's.
	b, err := os.ReadFile(report.Baseline.Transcript)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"url_template":"http://127.0.0.1:{port}/mcp"`) {
		t.Errorf("the baseline's session event has no url_template:\n%.400s", b)
	}
	var sum int64
	for _, s := range report.Scenarios {
		sum += s.DurationMS
	}
	t.Logf("the runs took %d ms one after the other; the matrix took %s", sum, time.Since(start).Round(time.Millisecond))
}

// Issue 42: test-client --server-url with {port} and --server: each run's
// server on a port of its own, side by side, with the verdicts of one at
// a time (TestHTTPClientMatrixOnTheMCPGoClient's, "handshake, listening").
func TestAPortForEachRunOfTheHTTPClientMatrix(t *testing.T) {
	client := filepath.Join(t.TempDir(), "client")
	if out, err := exec.Command("go", "build", "-o", client, "github.com/mcpchaos/mcpchaos/examples/cmd/client").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	u, _, _ := ParseURLTemplate("http://127.0.0.1:{port}/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	report, err := RunClient(ctx, ClientOptions{
		Client: []string{client, "--timeout", "20s", "--protocol", "2025-11-25", "--listen"}, Server: []string{mcpchaosBin, "serve", "--http", "127.0.0.1:{port}"},
		ServerURL: u, PortPerRun: true,
		Scenarios: faults.HTTPClientScenarios(), Seed: 1, Deadline: 10 * time.Second, HangAfter: 10 * time.Second, Grace: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []found{
		{"session-expired", reports.KindProtocolViolation, ""},
		{"session-forgotten", reports.KindProtocolViolation, ""},
	}
	if diff := cmp.Diff(want, summarize(report.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", diff, reportText(report))
	}
	if report.Target.URL != "http://127.0.0.1:{port}/mcp" {
		t.Errorf("report target URL %q; want it as written", report.Target.URL)
	}
	// A case would keep the server's command and URL as written.
	o := ClientOptions{ServerURL: u, PortPerRun: true, Server: []string{"server", "{port}"}}
	run, err := o.onFreshPort()
	if err != nil {
		t.Fatal(err)
	}
	if server, caseURL := run.caseTarget(); caseURL != "http://127.0.0.1:{port}/mcp" || server[1] != "{port}" || run.Server[1] != run.ServerURL.Port() {
		t.Errorf("case target %q %q, run's server %q at %s; want {port} kept, and the run's port in its command", server, caseURL, run.Server, run.ServerURL)
	}
}

// A scenario run on a port of its own is compared with the baseline of the
// same URL as written, though their URLs differ: the live matrix does so,
// and mcpchaos judge must too.
func TestRunsOnPortsOfTheirOwnAreOneTarget(t *testing.T) {
	run := func(u string) judgedRun {
		return judgedRun{session: wire.Event{Role: "server", URL: u, URLTemplate: "http://127.0.0.1:{port}/mcp"}}
	}
	if a, b := run("http://127.0.0.1:4001/mcp").target(), run("http://127.0.0.1:4002/mcp").target(); a != b {
		t.Errorf("targets %q and %q differ", a, b)
	}
	fixed := judgedRun{session: wire.Event{Role: "server", URL: "http://127.0.0.1:4001/mcp"}}
	other := judgedRun{session: wire.Event{Role: "server", URL: "http://127.0.0.1:4002/mcp"}}
	if fixed.target() == other.target() {
		t.Error("two fixed URLs are one target")
	}
}
