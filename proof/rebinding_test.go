package proof

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// Issue 41: the rebinding scenario on servers written as the SDKs show
// them, at releases before and after their DNS-rebinding advisories. Each
// verdict was read against MCP 2025-11-25 (Transports › Security Warning:
// servers MUST validate Origin, 403 for an invalid one):
//
//   - FastMCP of mcp 1.16.0 (before GHSA-9h52-p55h-vw2f, fixed in 1.23.0)
//     serves all four foreign handshakes, sessions and all.
//   - FastMCP of mcp 1.27.0 bound to 127.0.0.1 refuses them: 421 "Invalid
//     Host header", 403 "Invalid Origin header".
//   - the TypeScript SDK's README server (express(), 1.16.0) serves all four
//     (GHSA-w48q-cv73-mx4w).
//   - the same server built on createMcpExpressApp() (1.32.2, as the SDK's
//     examples do since the advisory) refuses a foreign Host with 403, and
//     serves a foreign Origin and Origin: null: its fix checks Host only,
//     and the specification's MUST is the Origin check.
func TestRebindingOnTheSDKsServers(t *testing.T) {
	root := repoRoot(t)
	corpus := corpusDir(t)
	all := []string{reports.RuleForeignHostServed, reports.RuleForeignOriginServed, reports.RuleNullOriginServed, reports.RuleRebindingServed}
	for _, tc := range []struct {
		name    string
		command func(port int) []string
		env     []string
		want    []string
	}{
		{"python-mcp-1.16.0", func(port int) []string {
			return []string{sdkPython(t, root, "py-fastmcp-2.12.5"), filepath.Join(root, "examples", "python", "servers", "fastmcp_http.py"), "--port", fmt.Sprint(port)}
		}, nil, all},
		{"python-mcp-1.27.0", func(port int) []string {
			return []string{sdkPython(t, root, "py-mcp-1.27.0"), filepath.Join(root, "examples", "python", "servers", "fastmcp_http.py"), "--port", fmt.Sprint(port)}
		}, nil, nil},
		{"typescript-1.16.0-express", func(port int) []string { return tsServer(t, corpus, "1.16.0", "per-session", port) }, nil, all},
		{"typescript-1.32.2-createMcpExpressApp", func(port int) []string { return tsServer(t, corpus, "1.32.2", "per-session", port) },
			[]string{"TS_APP=mcp"}, []string{reports.RuleForeignOriginServed, reports.RuleNullOriginServed}},
		// The reference server's streamableHttp transport is an express()
		// app with cors({origin: "*"}) and no check of Host or Origin: it
		// serves all four, and listens on every interface.
		{"server-everything-2026.8.31", func(port int) []string {
			return []string{"env", fmt.Sprintf("PORT=%d", port), "node",
				filepath.Join(corpus, "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"}
		}, nil, []string{reports.RuleForeignHostServed, reports.RuleForeignOriginServed, reports.RuleListensEverywhere, reports.RuleNullOriginServed, reports.RuleRebindingServed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			report := runHTTPScenario(t, "rebinding", nil, tc.command)
			var got []string
			for _, f := range report.Findings {
				if f.Scenario == "rebinding" {
					got = append(got, f.Rule)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rebinding findings (-want +got):\n%s\n%s", diff, reportSummary(report))
			}
		})
	}
}

// Issue 41: fault forge-origin forges the client's own calls. The
// TypeScript SDK 1.32.2's createMcpExpressApp() checks Host, not Origin:
// a tools/call of the probe's, sent on with a foreign Origin under the
// true Host, is served (foreign-origin-served); the same call with a
// foreign Host too is refused with 403, and the probe is told (no
// finding).
func TestForgeOriginOnTheTypeScriptSDK(t *testing.T) {
	corpus := corpusDir(t)
	t.Setenv("TS_APP", "mcp")
	scs := []faults.Scenario{
		{Name: "forged-origin", Faults: []string{"forge-origin:on=c2s:request:tools/call,forge=origin"}},
		{Name: "forged-rebinding", Faults: []string{"forge-origin:on=c2s:request:tools/call,forge=rebinding"}},
	}
	report := runHTTPScenarios(t, scs, nil, func(port int) []string { return tsServer(t, corpus, "1.32.2", "per-session", port) })
	var got []string
	for _, f := range report.Findings {
		got = append(got, f.Scenario+" "+f.Rule)
		if f.Rule == reports.RuleForeignOriginServed && !strings.Contains(f.Message, "the client's tools/call") {
			t.Errorf("the finding does not name the client's call: %s", f.Message)
		}
	}
	if diff := cmp.Diff([]string{"forged-origin " + reports.RuleForeignOriginServed}, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", diff, reportSummary(report))
	}
}

// runHTTPScenario runs the baseline and the scenario name against the
// server command(port) starts on 127.0.0.1:PORT/mcp, its client sending
// header, and fails t on a set-up error or a scenario that tested nothing.
func runHTTPScenario(t *testing.T, name string, header http.Header, command func(port int) []string) *reports.Report {
	t.Helper()
	scs, err := faults.SelectScenarios(faults.HTTPServerScenarios(), []string{name})
	if err != nil {
		t.Fatal(err)
	}
	return runHTTPScenarios(t, scs, header, command)
}

// runHTTPScenarios is runHTTPScenario of scenarios of the test's own.
func runHTTPScenarios(t *testing.T, scs []faults.Scenario, header http.Header, command func(port int) []string) *reports.Report {
	t.Helper()
	port := freePort(t)
	u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	report, err := suite.Run(ctx, suite.Options{Command: command(port), URL: u, Header: header, Scenarios: scs, Seed: 1,
		Deadline: 5 * time.Second, Grace: 2 * time.Second, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range report.Scenarios {
		if s.Outcome == reports.OutcomeIndeterminate {
			t.Errorf("%s: indeterminate %q", s.Name, s.Indeterminate)
		}
	}
	return report
}
