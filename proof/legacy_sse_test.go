package proof

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// The default HTTP matrix on server-everything 0.6.2 (npm, December 2024):
// SDK 1.0.1's legacy HTTP+SSE transport, protocol 2024-11-05, the oldest
// release of the reference server. Every scenario passes; the two of
// sessions (end-session-inflight, unknown-session) cannot fire (the legacy
// transport has no Mcp-Session-Id), and cut-inflight, which waits for
// three calls in flight, may not.
//
// Under cut-before-result the fault cuts the one stream every server
// message travels on, at both ends, as a network cut does. The example's
// server.onclose then exits the process, status 0: it serves one client,
// and ends with it (dist/sse.js). The calls in flight at the cut could
// only be answered on that stream, which the judge notes as the fault's
// doing, and notes the exit; no rule forbids a server to end with its only
// client. (When the cut kept the server's side open and read, its later
// sampleLLM call sent sampling/createMessage down the cut stream and
// waited for ever: mcpchaos's doing, noted too.)
func TestLegacySSEServerEverything062(t *testing.T) {
	dir := corpusDir(t)
	port := freePort(t)
	u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/sse", port))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	call := func(tool, args string) probe.Call { return probe.Call{Tool: tool, Args: json.RawMessage(args)} }
	report, err := suite.Run(ctx, suite.Options{
		Command: []string{"env", fmt.Sprintf("PORT=%d", port), "node",
			filepath.Join(dir, "npm/node_modules/server-everything-0.6.2/dist/sse.js")},
		URL:       u,
		Scenarios: faults.HTTPServerScenariosFor(u, false),
		Seed:      1,
		Deadline:  5 * time.Second,
		Grace:     2 * time.Second,
		// Three quick calls fill the probe's three slots; sampleLLM waits
		// for one to free.
		Probe: probe.Config{Calls: []probe.Call{
			call("echo", `{"message":"mcpchaos"}`), call("add", `{"a":1,"b":2}`),
			call("getTinyImage", `{}`), call("sampleLLM", `{"prompt":"mcpchaos","maxTokens":10}`)}},
		Repro: func(sc string, seed uint64) string { return fmt.Sprintf("--scenario %s --seed %d", sc, seed) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// Its example keeps one transport, the one of the client that
	// connected last (dist/sse.js: let transport), and hands every
	// client's POSTs to it: every answer goes down that client's stream,
	// under the same ids. Both scenarios of two sessions find it
	// (cross-session-message: one client got a second answer to its id 1
	// while the other's was never answered); its onclose ends the process
	// with a client's stream.
	summary := wantFindings(t, report, []found{
		{"sessions", reports.KindCrossSession, ""},
		{"sessions-one-ends", reports.KindCrossSession, ""},
	})
	for _, sc := range report.Scenarios {
		if sc.Name == "cut-before-result" && !strings.Contains(strings.Join(sc.Notes, "\n"), "the server exited on its own (exited with status 0)") {
			t.Errorf("cut-before-result does not note that the server exited when its stream was cut:\n%s", summary)
		}
	}
	// cut-inflight waits for three calls in flight at once, which its
	// quick tools seldom are on a loaded machine: it passes or cannot fire.
	wantIndeterminate(t, report, summary, []string{"end-session-task", "end-session-inflight", "unknown-session", "rebinding"}, "cut-inflight")
}
