package proof

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// FastMCP of mcp 1.6.0 (PyPI, April 2025), a server of the 2025-03-26
// revision, as the official SDK made it then.
//
//   - It dies on server/discover, the request a 2026 client opens with,
//     where it owes -32601 (Method not found): the baseline finds it, and the
//     matrix goes on in the stateful era, as --era stateful
//     (probe.Config.Era) does.
//   - It ends a session whose request arrives before notifications/
//     initialized ("Received request before initialization was complete").
//     The probe once posted tools/list alongside that notification, and
//     over the legacy HTTP+SSE transport every baseline was five hangs;
//     no SDK client sends in that order, and the probe no longer does
//     (httpconn waits for the notification's POST). The HTTP matrix finds
//     a zombie warning, which is the server's: its SSE transport leaves the
//     session's task running after the client disconnects, and uvicorn
//     waits for it on SIGTERM (a client that hung up 2 s before keeps it
//     up just the same). The probe's stream, and the proxy's to the
//     server, are closed before the SIGTERM.
//   - cut-before-result and get-stream-dropped fail (accepted-without-
//     stream), both cutting the session's one stream: once the cut has
//     closed the session's stream at both ends, the server still accepts
//     the session's POSTs (202) and answers none, for it has no stream to
//     answer on; its transport keeps the session's writer after the client
//     left (see TestLegacyServersRefuseADeadSession for mcp 1.27.0, which
//     does the same, and 2.3.0, which answers 404).
func TestFastMCP16(t *testing.T) {
	root := repoRoot(t)
	python := sdkPython(t, root, "py-mcp-1.6.0")
	server := filepath.Join(root, "examples", "python", "servers", "fastmcp_http.py")
	// Only slow calls: echo answers at once, and three calls would seldom
	// be in flight together (cut-inflight); on a loaded machine even slow
	// ones may not be, so cut-inflight may go either way.
	calls := []probe.Call{{Tool: "slow", Args: json.RawMessage(`{"ms":400,"steps":2}`)}}
	t.Run("dies on server/discover", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		port := freePort(t)
		u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/sse", port))
		report, err := suite.Run(ctx, suite.Options{Command: []string{python, server, "--port", fmt.Sprint(port), "--transport", "sse"}, URL: u,
			Scenarios: []faults.Scenario{faults.Baseline}, Seed: 1, Deadline: 5 * time.Second, Grace: 2 * time.Second,
			Probe: probe.Config{Calls: calls}})
		if err != nil {
			t.Fatalf("err = %v; want a report whose baseline finds server/discover unanswered", err)
		}
		var b strings.Builder
		reports.WriteSummary(&b, report)
		var methods []string
		for _, f := range report.Findings {
			if f.Severity == reports.SeverityError && f.Request != nil {
				methods = append(methods, f.Request.Method)
			}
		}
		slices.Sort(methods)
		// server/discover's and initialize's after it, in the default era
		// (the session stopped reading); then the stateful
		// era's, as the next subtest finds them.
		if want := []string{"initialize", "mcpchaos/no-such-method", "ping", "server/discover"}; !slices.Equal(methods, want) {
			t.Errorf("error findings of requests %v, want %v\n%s", methods, want, b.String())
		}
		if n := report.Baseline.Notes; !slices.ContainsFunc(n, func(n string) bool {
			return strings.HasPrefix(n, "server/discover, the first request of a client of the 2026-07-28 revision, went unanswered")
		}) {
			t.Errorf("no note of the baseline's is about server/discover: %q", n)
		}
	})
	t.Run("legacy HTTP+SSE, --era stateful", func(t *testing.T) {
		t.Parallel()
		// The matrix takes 3.5 min alone on two cores (every scenario waits
		// out the ping the server never answers); on a busy machine 5 min
		// ran out, and the last scenario's server was reported as never
		// listening.
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		port := freePort(t)
		u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/sse", port))
		report, err := suite.Run(ctx, suite.Options{Command: []string{python, server, "--port", fmt.Sprint(port), "--transport", "sse"}, URL: u,
			Scenarios: faults.HTTPServerScenariosFor(u, false), Seed: 1, Deadline: 5 * time.Second, Grace: 2 * time.Second,
			Probe: probe.Config{Calls: calls, Era: probe.EraStateful}})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		reports.WriteSummary(&b, report)
		var errs []string
		for _, f := range report.Findings {
			if f.Severity == reports.SeverityError {
				what := f.Scenario + ": " + f.Rule
				if f.Request != nil && f.Scenario == "baseline" {
					what += " " + f.Request.Method
				}
				errs = append(errs, what)
			}
		}
		slices.Sort(errs)
		// The baseline's: the request of a method no revision defines,
		// which the probe sends last but the ping, ends the session's
		// receive loop (a ValidationError it logs and does not answer),
		// as server/discover does; the ping after it goes unanswered too.
		want := []string{
			"baseline: " + reports.RuleUnanswered + " mcpchaos/no-such-method",
			"baseline: " + reports.RuleUnanswered + " ping",
			"cut-before-result: " + reports.RuleAcceptedNoStream,
			"get-stream-dropped: " + reports.RuleAcceptedNoStream,
		}
		if !slices.Equal(errs, want) {
			t.Errorf("error findings %v, want %v\n%s", errs, want, b.String())
		}
		wantIndeterminate(t, report, b.String(), []string{"end-session-task", "end-session-inflight", "unknown-session", "rebinding", "sessions-one-ends"}, "cut-inflight", "cut-surface")
	})
}

// FastMCP 2.12.5 (PyPI `fastmcp`, October 2025) on mcp 1.16.0, over
// streamable HTTP: the framework most Python servers of late 2025 ran on,
// serving proof/corpus/fastmcp_server.py. Once end-session-inflight has
// deleted the session, it answers the session's next requests 404, as the
// specification asks, with a body whose error has the id "server-error"
// (the Python SDK's 1.x sentinel, dropped in 2.x: python-sdk#2056). The
// status has answered each request, so that is the warning
// error-status-body-id; it used to fail the scenario as an
// unknown-response-id error. The DELETE also crashes the session: a call's
// answer meets the session's closed stream, and ClosedResourceError ends
// the session's task ("Session … crashed", python-sdk #1967; see
// TestPythonSDK1967_SessionCrashOnDelete_1_26_crashes_1_27_does_not), the
// error crash-session, which the judge once noted as a handled exception
// because the process served on. A session id it never issued
// (unknown-session) it answers 400 "Bad Request: No valid session ID
// provided", the answer to a request without one: the warning
// unknown-session-not-404, since it answers so its own sessions after a
// restart (mcp 1.27.0 answers 404). Nothing else is found.
func TestFastMCP212(t *testing.T) {
	root := repoRoot(t)
	python := sdkPython(t, root, "py-fastmcp-2.12.5")
	port := freePort(t)
	u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	report, err := suite.Run(ctx, suite.Options{
		Command: []string{python, filepath.Join(root, "proof", "corpus", "fastmcp_server.py"), "http", fmt.Sprint(port)},
		URL:     u, Scenarios: faults.HTTPServerScenariosFor(u, false), Seed: 1, Deadline: 5 * time.Second, Grace: 2 * time.Second,
		// Only slow calls, so that three are in flight together.
		Probe: probe.Config{Calls: []probe.Call{{Tool: "slow", Args: json.RawMessage(`{"steps":5}`)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// sessions-one-ends finds the crash again with a second client, whose
	// session the SDK serves on (when a call's answer meets the closed
	// stream within the second the first session's probe goes on for).
	summary := wantFindings(t, withoutMaybe(report, []found{{"sessions-one-ends", reports.KindCrash, crashClosed}}), []found{
		{"end-session-inflight", reports.KindCrash, crashClosed},
		{"end-session-inflight", reports.KindProtocolViolation, ""},
		// mcp 1.16.0 predates the DNS-rebinding protection of 1.23.0
		// (GHSA-9h52-p55h-vw2f): the four foreign handshakes are served.
		{"rebinding", reports.KindSecurity, ""},
		{"rebinding", reports.KindSecurity, ""},
		{"rebinding", reports.KindSecurity, ""},
		{"rebinding", reports.KindSecurity, ""},
		{"unknown-session", reports.KindProtocolViolation, ""},
	})
	wantSaid(t, report, reports.KindCrash, "ended a session")
	wantUnknownSession400(t, report, summary)
	for _, f := range report.Findings {
		if f.Rule == reports.RuleErrorBodyID && (f.Severity != reports.SeverityWarning || !strings.Contains(f.Message, `HTTP 404`) || !strings.Contains(f.Message, `"server-error"`)) {
			t.Errorf("the 404s' bodies are not named as such: %+v\n%s", f, summary)
		}
	}
	// cut-surface waits for a resources/read and a prompts/get in flight
	// together, which FastMCP answers at once: on a loaded machine the
	// first may be answered before the second arrives (CI17).
	wantIndeterminate(t, report, summary, []string{"end-session-task"}, "cut-inflight", "cut-surface")
}

// A legacy HTTP+SSE server whose session's stream has closed has no way
// to answer that session's requests: it must refuse them (404), not accept
// them (202) and lose them. cut-before-result closes the stream at both
// ends, as a network cut does; the probe then goes on POSTing to the
// session, as a client that has not noticed does. FastMCP of mcp 1.27.0
// (the last 1.x) closes the session's writer when the client leaves but
// keeps it registered: it answers the next POST 202, then fails to hand
// it on (anyio.ClosedResourceError, logged), and the request is lost.
// mcp 2.3.0 forgets the session, and answers 404. Before cuts closed the
// server's side, the proxy kept reading the stream for the record, the
// server never saw its client go, and both passed.
func TestLegacyServersRefuseADeadSession(t *testing.T) {
	root := repoRoot(t)
	server := filepath.Join(root, "examples", "python", "servers", "fastmcp_http.py")
	for _, tc := range []struct {
		name, python string
		want         []found
	}{
		{"mcp 1.27.0", filepath.Join(root, ".sdk", "py-mcp-1.27.0", "bin", "python"),
			[]found{{Scenario: "cut-before-result", Kind: reports.KindLostResponse}}},
		{"mcp 2.3.0", filepath.Join(corpusDir(t), "py", "bin", "python"), []found{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			port := freePort(t)
			u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/sse", port))
			cut, _ := faults.SelectScenarios(faults.HTTPServerScenarios(), []string{"cut-before-result"})
			start := time.Now()
			report, err := suite.Run(ctx, suite.Options{Command: []string{tc.python, server, "--port", fmt.Sprint(port), "--transport", "sse"}, URL: u,
				Scenarios: cut, Seed: 1, Deadline: 5 * time.Second, Grace: 2 * time.Second,
				Probe: probe.Config{Calls: []probe.Call{{Tool: "slow", Args: json.RawMessage(`{"ms":400,"steps":2}`)}}, Era: probe.EraStateful}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("verdict after %s: %s", time.Since(start).Round(time.Millisecond), scenarioTimes(report))
			summary := wantFindings(t, report, tc.want)
			for _, f := range report.Findings {
				if f.Rule != reports.RuleAcceptedNoStream {
					t.Errorf("finding under rule %s; want %s\n%s", f.Rule, reports.RuleAcceptedNoStream, summary)
				}
			}
		})
	}
}
