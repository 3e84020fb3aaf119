package proof

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
)

// Clients written as short scripts that catch nothing, on FastMCP 4's
// Client (PyPI fastmcp 4.2.3 on mcp 2.3.0, from the corpus) and on the
// TypeScript SDK 1.32.2's Client, through the stdio and the HTTP client
// matrices against the bundled server. Where a call becomes impossible
// (server-eof, result-stream-cut, server-error, connection-reset,
// session-expired) the script ends on the SDK's error with a traceback or a
// stack and status 1: that is the failure those scenarios expect, and was
// once judged a crash (python:MCPError, python:RemoteProtocolError,
// python:ReadError, node:McpError, node:TypeError for "fetch failed"). No
// error; every scenario passes but those that say why they could not fail:
// session-expired, session-forgotten and get-stream-cut against FastMCP's
// client, which speaks the stateless 2026-07-28 revision with no session to
// end or forget and no GET stream to cut, and progress-before-response against the TypeScript script,
// whose call asks for no progress. Told 404 for its session, the
// TypeScript script starts no new session: the warning
// no-new-session-after-404, in both of those scenarios.
func TestUncaughtClientsFailCleanly(t *testing.T) {
	dir := corpusDir(t)
	bin := mcpchaosBinary(t)
	root := repoRoot(t)
	node := typeScriptSDK(t, filepath.Join(root, "examples", "typescript"))
	for _, tc := range []struct {
		name          string
		client        []string
		indeterminate map[string]string // scenario: the transport where it may be
		// noNewSession says the client starts no new session on a 404.
		noNewSession bool
	}{
		{"fastmcp-4.2.3", []string{filepath.Join(dir, "py/bin/python"), filepath.Join(root, "proof", "corpus", "fastmcp_client.py")},
			map[string]string{"session-expired": "http", "session-forgotten": "http", "get-stream-cut": "http"}, false},
		{"typescript-sdk-1.32.2", []string{node, filepath.Join(root, "examples", "typescript", "uncaught_client.mjs")},
			map[string]string{"progress-before-response": "any"}, true},
	} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(tc.name+"/"+transport, func(t *testing.T) {
				t.Parallel()
				report := runClientMatrix(t, bin, tc.client, transport)
				var b strings.Builder
				reports.WriteSummary(&b, report)
				var noNewSession []string
				for _, f := range report.Findings {
					if f.Rule == reports.RuleNoNewSession && f.Severity == reports.SeverityWarning {
						noNewSession = append(noNewSession, f.Scenario)
						continue
					}
					t.Errorf("finding %s %s %s [%s]: %s\n%s", f.Severity, f.Rule, f.Signature, f.Scenario, f.Message, b.String())
				}
				var want []string
				if tc.noNewSession && transport == "http" {
					want = []string{"session-expired", "session-forgotten"}
				}
				if !slices.Equal(noNewSession, want) {
					t.Errorf("no-new-session-after-404 in %q, want in %q\n%s", noNewSession, want, b.String())
				}
				for _, sc := range append([]reports.ScenarioResult{*report.Baseline}, report.Scenarios...) {
					if where := tc.indeterminate[sc.Name]; (where == transport || where == "any") && sc.Outcome == reports.OutcomeIndeterminate {
						continue
					}
					if sc.Outcome != reports.OutcomePass {
						t.Errorf("%s: %s %q\n%s", sc.Name, sc.Outcome, sc.Indeterminate, b.String())
					}
				}
			})
		}
	}
}
