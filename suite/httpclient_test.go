package suite

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// httpServed is the bundled example served on HTTP at a free loopback
// port: its URL, and the command that serves it, started per scenario.
func httpServed(t *testing.T) (*url.URL, []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	u, _ := url.Parse("http://" + addr + "/mcp")
	return u, []string{mcpchaosBin, "serve", "--http", addr}
}

func runHTTPClient(t *testing.T, client []string, deadline time.Duration) *reports.Report {
	t.Helper()
	u, server := httpServed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	report, err := RunClient(ctx, ClientOptions{
		Client: client, Server: server, ServerURL: u,
		Scenarios: faults.HTTPClientScenarios(), Seed: 1, Deadline: deadline, HangAfter: deadline, Grace: 2 * time.Second, Parallel: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Each scenario's server was stopped: nothing of it outlives the run.
	if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
		c.Close()
		t.Errorf("something still listens on %s after the run", u.Host)
	}
	return report
}

// TestHTTPClientThatIsNotAnMCPClient: over HTTP too, a program that never
// connects to $MCPCHAOS_SERVER_URL, or connects and opens no MCP session,
// is a set-up error that says what it did, without waiting for the hang
// horizon.
func TestHTTPClientThatIsNotAnMCPClient(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"never-launches", []string{"the client never connected to the URL in $MCPCHAOS_SERVER_URL: it exited with status 0 after ", "(does it read the variable?)"}},
		{"sleeps", []string{"the client never connected to the URL in $MCPCHAOS_SERVER_URL: it was stopped by mcpchaos after "}},
		{"not-mcp", []string{"the client reached the URL in $MCPCHAOS_SERVER_URL but opened no MCP session: it sent no initialize (nor server/discover) request, its first was the message {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\"}, and it exited with status 0", "is it an MCP client?"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv(clientModeEnv, tc.mode)
			u, server := httpServed(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			_, err := RunClient(ctx, ClientOptions{
				Client: []string{os.Args[0]}, Server: server, ServerURL: u,
				Scenarios: faults.HTTPClientScenarios(), Seed: 1, Deadline: 3 * time.Second, Grace: time.Second,
			})
			var setup *SetupError
			if !errors.As(err, &setup) {
				t.Fatalf("err = %v, want a set-up error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %q", err, w)
				}
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the set-up error took %s", took)
			}
		})
	}
}

func reportText(r *reports.Report) string {
	var b strings.Builder
	reports.WriteSummary(&b, r)
	return b.String()
}

// The HTTP client matrix finds no error in mcp-go's client (the example
// client over streamable HTTP) in either era: one would be a false alarm
// for every user. Told 404 for its session (session-expired,
// session-forgotten), the client fails the call (ErrSessionTerminated) and
// the example exits 1 without starting a new session, which the
// specification asks of it: a warning. The stateless era has no session to
// expire or forget, and mcp-go's client opens no GET stream unless asked
// (--listen), which the verdicts say rather than passing in silence.
func TestHTTPClientMatrixOnTheMCPGoClient(t *testing.T) {
	client := filepath.Join(t.TempDir(), "client")
	if out, err := exec.Command("go", "build", "-o", client, "github.com/mcpchaos/mcpchaos/examples/cmd/client").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	noNewSession := []found{
		{"session-expired", reports.KindProtocolViolation, ""},
		{"session-forgotten", reports.KindProtocolViolation, ""},
	}
	for _, tc := range []struct {
		name   string
		args   []string
		want   []found
		indets []string
	}{
		{"handshake", []string{"--protocol", "2025-11-25"}, noNewSession, []string{"get-stream-cut"}},
		{"handshake, listening", []string{"--protocol", "2025-11-25", "--listen"}, noNewSession, nil},
		{"stateless", nil, nil, []string{"session-expired", "session-forgotten", "get-stream-cut"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			report := runHTTPClient(t, append([]string{client, "--timeout", "20s"}, tc.args...), 10*time.Second)
			if diff := cmp.Diff(tc.want, summarize(report.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, reportText(report))
			}
			var indets []string
			for _, sc := range report.Scenarios {
				if sc.Outcome == "indeterminate" {
					indets = append(indets, sc.Name)
				}
			}
			if diff := cmp.Diff(tc.indets, indets); diff != "" {
				t.Errorf("indeterminate scenarios (-want +got):\n%s\n%s", diff, reportText(report))
			}
			if report.Target.URL == "" {
				t.Error("the report does not name the server's URL")
			}
			for _, f := range report.Findings {
				if f.Rule != reports.RuleNoNewSession {
					t.Errorf("finding %s %s: %s", f.Severity, f.Rule, f.Message)
				}
			}
		})
	}
}

// The planted-bug HTTP clients are found by name in the scenarios that
// expose them, and their fixed twins pass every scenario: stale-session's
// retries under the dead id are an error beside its hang, once told 404
// for a session the server ended (session-expired) or forgot
// (session-forgotten); its fixed twin starts a new session and finds
// nothing. lost-stream's fixed twin fails the call told 404 and exits
// without a new session: the warning no-new-session-after-404, no error.
func TestHTTPPlantedBugClients(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want      []found
		wantFixed []found
	}{
		{"lost-stream", []found{
			{"result-stream-cut", reports.KindHang, ""},
			{"server-error", reports.KindHang, ""},
			{"session-expired", reports.KindHang, ""},
			{"session-forgotten", reports.KindHang, ""},
		}, []found{
			{"session-expired", reports.KindProtocolViolation, ""},
			{"session-forgotten", reports.KindProtocolViolation, ""},
		}},
		{"stale-session", []found{
			{"session-expired", reports.KindHang, ""},
			{"session-expired", reports.KindProtocolViolation, ""},
			{"session-forgotten", reports.KindHang, ""},
			{"session-forgotten", reports.KindProtocolViolation, ""},
		}, nil},
	} {
		bin := filepath.Join(examplesDir, tc.name)
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			report := runHTTPClient(t, []string{bin}, 6*time.Second)
			if diff := cmp.Diff(tc.want, summarize(report.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, reportText(report))
			}
			for _, f := range report.Findings {
				if f.Kind == reports.KindProtocolViolation && f.Rule != reports.RuleDeadSessionReused {
					t.Errorf("%s: rule %s, want %s: %s", f.Scenario, f.Rule, reports.RuleDeadSessionReused, f.Message)
				}
			}
		})
		t.Run(tc.name+"-fixed", func(t *testing.T) {
			t.Parallel()
			report := runHTTPClient(t, []string{bin, "--fixed"}, 6*time.Second)
			if diff := cmp.Diff(tc.wantFixed, summarize(report.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, reportText(report))
			}
			for _, f := range report.Findings {
				if f.Severity != reports.SeverityWarning {
					t.Errorf("the fixed twin has an error: %s %s: %s", f.Rule, f.Scenario, f.Message)
				}
			}
		})
	}
}

// Each planted-bug HTTP server is found by name under the scenario that
// exposes it, and its fixed twin passes the whole HTTP matrix:
// closed-session's DELETE closes the channel its running calls answer
// into (a panic on stderr, the server dies); cancel-panic's cancellation
// of a finished call panics in a handler whose recovery middleware answers
// 500 with the stack (the body is the only trace; the server serves on).
func TestHTTPPlantedBugServer(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []found
		// mayCome are findings that may come with the crash: a probe
		// request in flight when the server died is lost with it.
		mayCome []found
	}{
		// Its panic takes the server down with every session: under
		// sessions-one-ends the first session's DELETE crashes it, and the
		// second session's calls in flight then, if any, are lost with it
		// (cross-session-fault).
		{"closed-session", []found{{"end-session-inflight", reports.KindCrash, "go:panic"}, {"sessions-one-ends", reports.KindCrash, "go:panic"}},
			[]found{{"end-session-inflight", reports.KindLostResponse, ""}, {"sessions-one-ends", reports.KindCrossSession, ""}}},
		{"cancel-panic", []found{{"cancel-race", reports.KindCrash, "go:panic"}}, nil},
	} {
		for _, fixed := range []bool{false, true} {
			name := tc.name
			if fixed {
				name += "/fixed"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := ln.Addr().String()
				ln.Close()
				command := []string{filepath.Join(examplesDir, tc.name), "--addr", addr}
				if fixed {
					command = append(command, "--fixed")
				}
				u, _ := url.Parse("http://" + addr + "/mcp")
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				report, err := Run(ctx, Options{Command: command, URL: u, Scenarios: faults.HTTPServerScenariosFor(u, false),
					Seed: 1, Deadline: 3 * time.Second, Grace: 2 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				got := summarize(report.Findings)
				var want []found
				if !fixed {
					want = tc.want
					got = slices.DeleteFunc(got, func(f found) bool { return slices.Contains(tc.mayCome, f) })
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("findings (-want +got):\n%s\n%s", diff, reportText(report))
				}
				for _, sc := range report.Scenarios {
					// Neither offers a GET stream (405, as the
					// specification allows): nothing to cut; nor
					// prompts, resources or tasks.
					if sc.Outcome == reports.OutcomeIndeterminate && !slices.Contains([]string{"get-stream-dropped", "cut-surface", "end-session-task"}, sc.Name) {
						t.Errorf("%s: indeterminate %q", sc.Name, sc.Indeterminate)
					}
				}
			})
		}
	}
}
