package proof

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
)

// Issue 41: the credentials scenario on FastMCP (mcp 1.27.0) serving as an
// OAuth resource server, as the SDK's README shows (a TokenVerifier and
// AuthSettings; proof/corpus/httpservers/fastmcp_auth.py). The verifier
// that compares the token refuses every changed credential and the
// session's requests without it with 401 and a Bearer challenge: nothing.
// A verifier that takes any token (a stub left in place) serves a made-up
// one: made-up-credentials-served, once (the session's ping with the
// made-up token is the same hole). A tool that answers with the caller's
// token is credentials-echoed, and no report's words hold the token.
func TestCredentialsOnFastMCP(t *testing.T) {
	root := repoRoot(t)
	python := sdkPython(t, root, "py-mcp-1.27.0")
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"checked", nil},
		{"any", []string{reports.RuleCredentialsServed}},
		// The probe calls every tool: whoami's answer holds the token.
		{"echo", []string{reports.RuleCredentialsEchoed}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			report := runHTTPScenario(t, "credentials", http.Header{"Authorization": {"Bearer s3cret-token-1234"}}, func(port int) []string {
				return []string{python, filepath.Join(root, "proof", "corpus", "httpservers", "fastmcp_auth.py"), fmt.Sprint(port), tc.mode}
			})
			var got []string
			for _, f := range report.Findings {
				got = append(got, f.Rule)
				if b, _ := json.Marshal(f); strings.Contains(string(b), "s3cret-token-1234") {
					t.Errorf("a finding holds the token: %s", b)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, reportSummary(report))
			}
		})
	}
}
