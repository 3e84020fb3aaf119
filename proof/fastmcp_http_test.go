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

// FastMCP (the Python SDK's server, mcp 1.27.0) over streamable HTTP and
// over the legacy HTTP+SSE transport, under test --url; and the SDK's
// legacy SSE client under test-client --server-url against it. Every
// finding was read against the specification and the SDK's tracker:
//
//   - streamable HTTP, end-session-inflight: once its session is ended, the
//     server answers the session's requests 404 with a JSON-RPC error whose
//     id is the string "server-error", an id never requested (JSON-RPC
//     wants null for an id the server did not read). The 404 answers each
//     request, so no client waits: the warning error-status-body-id, not
//     an unknown-response-id error as it once was. python-sdk #2056
//     replaced the sentinel with null in mcp 2.x, whose everything-server
//     passes (TestURLMatrixOnRealServers).
//   - streamable HTTP, unknown-session: a session id it never issued is
//     answered 404, as the specification asks of a session it lost.
//   - legacy SSE, end-session-inflight and unknown-session: no
//     Mcp-Session-Id on that transport, so there is no session to end or
//     forget: indeterminate, as they say.
//   - legacy SSE, cut-before-result and get-stream-dropped: both cut the
//     session's one stream at both ends, after which the server still
//     accepts the session's POSTs (202) and can answer none of them
//     (accepted-without-stream; TestLegacyServersRefuseADeadSession).
//   - the sse_client under get-stream-cut: its GET stream is the one every
//     answer travels on, so its call becomes impossible, and it fails it
//     (httpx.RemoteProtocolError, uncaught, exit 1): a note, not a crash.
//   - the sse_client: a POST of a call answered 503, or reset, is logged
//     ("Error in post_writer") and never fails the call, which waits for
//     ever: hang in server-error and connection-reset (python-sdk #2110,
//     open). The tracebacks its transport tasks log are of the HTTP
//     library's errors for the failed call, in scenarios that expect the
//     call to fail: notes, not crashes. They used to be crash findings
//     beside the hang, a false alarm about what was a hang.
func TestFastMCPOverHTTP(t *testing.T) {
	root := repoRoot(t)
	python := sdkPython(t, root, "py-mcp-1.27.0")
	server := func(port int, transport string) []string {
		return []string{python, filepath.Join(root, "examples", "python", "servers", "fastmcp_http.py"),
			"--port", fmt.Sprint(port), "--transport", transport}
	}
	for _, tc := range []struct {
		transport, path string
		want            []found
		indeterminate   []string
	}{
		// It lists no prompt or resource (cut-surface) and runs no task
		// (end-session-task).
		{"streamable-http", "/mcp", []found{{"end-session-inflight", reports.KindProtocolViolation, ""}}, []string{"cut-surface", "end-session-task"}},
		{"sse", "/sse", []found{{"cut-before-result", reports.KindLostResponse, ""}, {"get-stream-dropped", reports.KindLostResponse, ""}},
			// The legacy transport has no Mcp-Session-Id: nothing to end
			// or forget, in one session or two; and its sessions open
			// with a GET, which carries no Origin (rebinding is skipped).
			[]string{"cut-surface", "end-session-task", "end-session-inflight", "unknown-session", "rebinding", "sessions-one-ends"}},
	} {
		t.Run("server/"+tc.transport, func(t *testing.T) {
			t.Parallel()
			port := freePort(t)
			u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d%s", port, tc.path))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			// Only slow calls: echo answers in a millisecond, so whether
			// three calls are ever in flight at once (end-session-inflight,
			// cut-inflight) would hang on the machine's load.
			report, err := suite.Run(ctx, suite.Options{Command: server(port, tc.transport), URL: u,
				Scenarios: faults.HTTPServerScenariosFor(u, false), Seed: 1, Deadline: 5 * time.Second, Grace: 2 * time.Second,
				Probe: probe.Config{Calls: []probe.Call{{Tool: "slow", Args: json.RawMessage(`{"ms":400,"steps":2}`)}}}})
			if err != nil {
				t.Fatal(err)
			}
			summary := wantFindings(t, report, tc.want)
			wantIndeterminate(t, report, summary, tc.indeterminate)
		})
	}
	t.Run("client/sse_client", func(t *testing.T) {
		t.Parallel()
		port := freePort(t)
		u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/sse", port))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		report, err := suite.RunClient(ctx, suite.ClientOptions{
			Client:    []string{python, filepath.Join(root, "examples", "python", "clients", "http_client.py"), "--sse"},
			Server:    server(port, "sse"),
			ServerURL: u,
			Scenarios: faults.HTTPClientScenarios(),
			Seed:      1,
			Deadline:  10 * time.Second,
			HangAfter: 10 * time.Second, // its calls wait for ever: no timeout of its own ends them
			Grace:     2 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []found{
			{"connection-reset", reports.KindHang, ""},
			{"server-error", reports.KindHang, ""},
		}
		wantFindings(t, report, want)
		// Past its deadline the client gets a ping on its /sse stream. Its
		// post_writer died with the 503 or the reset, so answering the
		// ping raises and it exits 1: still a hang, as it had outrun its
		// deadline waiting for a call its transport had already failed.
		wantSaid(t, report, reports.KindHang, "liveness")
	})
}
