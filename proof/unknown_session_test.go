package proof

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// unknown-session on the Python servers of streamable HTTP that the whole
// matrix does not already run: FastMCP 4.2.3 (PyPI fastmcp) on mcp 2.3.0,
// serving proof/corpus/fastmcp_server.py. A session id it never issued is
// answered 404 (mcp 2.x's session manager: "Session not found"), what the
// specification asks of a session a server lost: the scenario passes, and
// not by serving the id (which would be a note). FastMCP on mcp 1.27.0
// (404, TestFastMCPOverHTTP) and FastMCP 2.12.5 on mcp 1.16.0 (400, a
// warning, TestFastMCP212) run the whole matrix.
func TestUnknownSessionOnFastMCP4(t *testing.T) {
	dir := corpusDir(t)
	port := freePort(t)
	u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sc, err := faults.SelectScenarios(faults.HTTPServerScenarios(), []string{"unknown-session"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	report, err := suite.Run(ctx, suite.Options{
		Command:   []string{filepath.Join(dir, "py/bin/python"), filepath.Join(dir, "..", "proof", "corpus", "fastmcp_server.py"), "http", fmt.Sprint(port)},
		URL:       u,
		Scenarios: sc,
		Seed:      1,
		Deadline:  5 * time.Second,
		Grace:     2 * time.Second,
		Probe:     probe.Config{Calls: []probe.Call{{Tool: "slow", Args: json.RawMessage(`{"steps":2}`)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("verdict after %s: %s", time.Since(start).Round(time.Millisecond), scenarioTimes(report))
	summary := wantFindings(t, report, []found{})
	for _, s := range report.Scenarios {
		if s.Outcome != reports.OutcomePass || len(s.Notes) != 0 {
			t.Errorf("%s: %s, notes %q, indeterminate %q; want a pass on a 404\n%s", s.Name, s.Outcome, s.Notes, s.Indeterminate, summary)
		}
	}
}
