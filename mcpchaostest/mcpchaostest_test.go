package mcpchaostest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/leakcheck"
)

func TestMain(m *testing.M) {
	leakcheck.Main(m, 10*time.Second, "mcpchaos/suite", "mcpchaos/chaos", "mcpchaos/httpchaos", "mcpchaos/httpconn", "github.com/mark3labs/mcp-go")
}

// recorder is a T that keeps what a test would have reported.
type recorder struct{ errors, fatals, logs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, a...))
}
func (r *recorder) Logf(format string, a ...any) { r.logs = append(r.logs, fmt.Sprintf(format, a...)) }

// buildCrash builds the planted-bug server that panics when its stdin
// closes under running calls.
func buildCrash(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "crash")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/mcpchaos/mcpchaos/examples/servers/crash").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// A server with a planted bug fails the test with the finding and the
// command that replays it; its fixed twin passes.
func TestRunCommand(t *testing.T) {
	bin := buildCrash(t)
	var buggy recorder
	Run(&buggy, Config{Command: []string{bin}, Scenarios: []string{"eof-inflight"}, Deadline: 2 * time.Second})
	if len(buggy.errors) != 1 || !strings.Contains(buggy.errors[0], "crash go:panic in scenario eof-inflight: Go panic: send on closed channel") ||
		!strings.Contains(buggy.errors[0], "repro: mcpchaos test --scenario eof-inflight --seed 1 -- "+bin) {
		t.Errorf("the buggy server's test reported %q (fatal %q)", buggy.errors, buggy.fatals)
	}
	var fixed recorder
	Run(&fixed, Config{Command: []string{bin, "--fixed"}, Scenarios: []string{"eof-inflight"}, Deadline: 2 * time.Second})
	if len(fixed.errors)+len(fixed.fatals) != 0 {
		t.Errorf("the fixed twin's test failed: %q %q", fixed.errors, fixed.fatals)
	}
}

// An mcp-go server in the test's process goes through the HTTP matrix.
// With server.WithStateful(true) it passes. With mcp-go's default session
// manager (StatelessGeneratingSessionIdManager: it hands out session ids
// but keeps no record of them) it accepts the DELETE of its session with
// 200 and then goes on serving that session, where the specification
// says a terminated session's requests MUST get 404 (Streamable HTTP,
// Session Management): a true finding, on mcp-go v1.2.1's default.
func TestRunInProcess(t *testing.T) {
	r := Run(t, Config{Server: everything.New(), HTTPOptions: []server.StreamableHTTPOption{server.WithStateful(true)}})
	// Neither rebinding (the HTTP front is this package's) nor credentials
	// (a Config sends none) runs.
	want := slices.DeleteFunc(faults.HTTPServerScenarios(), func(sc faults.Scenario) bool { return faults.LocalOnly(sc) || faults.NeedsCredentials(sc) })
	if r == nil || r.Outcome != "pass" || len(r.Scenarios) != len(want) {
		t.Errorf("stateful: report %+v", r)
	}
	var def recorder
	Run(&def, Config{Server: everything.New(), Scenarios: []string{"end-session-inflight"}})
	if len(def.errors) != 1 || !strings.Contains(def.errors[0], "protocol-violation in scenario end-session-inflight: the server accepted the DELETE of session") ||
		!strings.Contains(def.errors[0], `repro: mcpchaostest.Config{Server: ..., Scenarios: []string{"end-session-inflight"}, Seed: 1}`) {
		t.Errorf("mcp-go's default session manager: %q %q", def.errors, def.fatals)
	}
}

func TestCheckConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"nothing", Config{}, "set exactly one of Config.Command, Config.Server and Config.URL"},
		{"two", Config{Command: []string{"srv"}, URL: "http://127.0.0.1:1/mcp"}, "set exactly one"},
		{"bad URL", Config{URL: "localhost:3000"}, `Config.URL "localhost:3000" is not an http:// or https:// MCP endpoint`},
		{"unknown scenario", Config{Command: []string{"srv"}, Scenarios: []string{"stal-s2c"}}, `unknown scenario "stal-s2c"`},
		{"missing command", Config{Command: []string{filepath.Join(os.TempDir(), "no-such-server")}}, "no-such-server"},
	} {
		_, err := Check(tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
