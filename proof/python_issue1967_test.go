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

// python-sdk issue #1967, fixed in mcp 1.27.0 by the v1.x backport (PR
// #2334) of PR #2306: a streamable HTTP session whose client ends it
// (DELETE) while a tool call runs. The handler's answer meets the session's
// closed write stream, and anyio.ClosedResourceError escapes Server.run():
// the session manager catches it only to keep the process serving its other
// sessions, and logs "Session … crashed" with the traceback. That is the
// HTTP face of the stdio crash of issue #526, and the judge once noted it
// as a handled exception, since the process served on: it is the error
// crash-session now. 1.27.0 drops an answer to a closed stream instead.
//
// Every release here also logs tracebacks that it does handle: the
// standalone stream's writer (and, in 1.16.0, the message router) meets the
// closed stream when the session ends, and the SDK logs that and closes the
// stream. In 1.27.0's end-session-inflight that is all it logs, seconds
// before the run stops it: a handled exception, a note. (The baselines log
// the same after the probe's own DELETE, but so close to the SIGTERM that
// ends the run that the traceback may come after it: noted either way, and
// not asserted.)
func TestPythonSDK1967_SessionCrashOnDelete_1_26_crashes_1_27_does_not(t *testing.T) {
	root := repoRoot(t)
	scenarios, err := faults.SelectScenarios(faults.HTTPServerScenarios(), []string{"end-session-inflight"})
	if err != nil {
		t.Fatal(err)
	}
	fastmcpHTTP := func(sdk string) func(port int) []string {
		return func(port int) []string {
			return []string{sdkPython(t, root, sdk), filepath.Join(root, "examples", "python", "servers", "fastmcp_http.py"), "--port", fmt.Sprint(port)}
		}
	}
	const handled = "went on serving: a handled exception, not a crash"
	for _, tc := range []struct {
		name    string
		command func(port int) []string
		// call is the slow tool's arguments: a call that is still running
		// when the fault ends the session, and that reports progress.
		call  string
		crash bool
	}{
		{
			// The FastMCP most Python servers of late 2025 ran on.
			name: "fastmcp 2.12.5 on mcp 1.16.0",
			command: func(port int) []string {
				return []string{sdkPython(t, root, "py-fastmcp-2.12.5"), filepath.Join(root, "proof", "corpus", "fastmcp_server.py"), "http", fmt.Sprint(port)}
			},
			call: `{"steps":5}`, crash: true,
		},
		{name: "mcp 1.26.0", command: fastmcpHTTP("py-mcp-1.26.0"), call: `{"ms":400,"steps":2}`, crash: true},
		{name: "mcp 1.27.0", command: fastmcpHTTP("py-mcp-1.27.0"), call: `{"ms":400,"steps":2}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			port := freePort(t)
			u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			report, err := suite.Run(ctx, suite.Options{
				Command: tc.command(port), URL: u, Scenarios: scenarios, Seed: 1, Deadline: 5 * time.Second, Grace: 2 * time.Second,
				Probe: probe.Config{Calls: []probe.Call{{Tool: "slow", Args: json.RawMessage(tc.call)}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: verdict in %s (%s)", tc.name, time.Since(start).Round(time.Millisecond), scenarioTimes(report))
			// The 404s after the DELETE carry the 1.x SDK's "server-error"
			// id (TestFastMCP212).
			want := []found{{"end-session-inflight", reports.KindProtocolViolation, ""}}
			if tc.crash {
				want = append([]found{{"end-session-inflight", reports.KindCrash, crashClosed}}, want...)
			}
			summary := wantFindings(t, report, want)
			for _, f := range report.Findings {
				if f.Kind != reports.KindCrash {
					continue
				}
				if f.Rule != reports.RuleCrashSession || f.Severity != reports.SeverityError {
					t.Errorf("the crash cites %s (%s), want %s (error)", f.Rule, f.Severity, reports.RuleCrashSession)
				}
				for _, says := range []string{"Python exception anyio.ClosedResourceError ended a session", " crashed", "went on serving"} {
					if !strings.Contains(f.Message, says) {
						t.Errorf("the crash does not say %q: %s", says, f.Message)
					}
				}
				if x := f.Evidence[0].Excerpt; !strings.Contains(x, " crashed") || !strings.Contains(x, "anyio.ClosedResourceError") {
					t.Errorf("the crash's excerpt lacks the SDK's line or the exception:\n%s", x)
				}
			}
			if tc.crash {
				return
			}
			for _, s := range report.Scenarios {
				if s.Name == "end-session-inflight" && !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, handled) }) {
					t.Errorf("end-session-inflight's notes do not say %q: %q\n%s", handled, s.Notes, summary)
				}
			}
		})
	}
}
