package probe

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// slowDiscoverServer serves the stateless revision only, like a server on
// mcp 2.x, but answers server/discover late (a Python server starting on a
// loaded machine); once it has, it refuses initialize on that connection.
func slowDiscoverServer(t *testing.T, delay time.Duration) func(f *fake) {
	return func(f *fake) {
		f.serve(t, func(m msg, _ string) bool {
			switch m.Method {
			case "server/discover":
				time.Sleep(delay)
				f.send(result(m.ID, `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"slow","version":"1"}}}`))
			case "initialize":
				f.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32022,"message":"connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted"}}`)
			case "tools/list":
				f.send(result(m.ID, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"resultType":"complete"}`))
			case "tools/call":
				if m.Params.Name != "a" {
					f.refuse(m, "a")
					break
				}
				f.send(result(m.ID, `{"content":[],"resultType":"complete"}`))
			default:
				f.refuse(m)
			}
			return true
		})
	}
}

// A server that answers server/discover after the probe's short wait is
// still reached in the era it serves, not given up as one that never
// initializes (issue 9: mcp-server-time on mcp 2.3.0 under load).
func TestLateDiscoverAnswerDecidesTheEra(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, slowDiscoverServer(t, 700*time.Millisecond))
	out, _, err := run(t, Config{Deadline: 500 * time.Millisecond, Concurrency: 1}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Era != EraStateless || !out.Initialized || out.ServerName != "slow" {
		t.Errorf("era %q, initialized %v, server %q; want the stateless era of server slow", out.Era, out.Initialized, out.ServerName)
	}
	want := []Request{
		{ID: "1", Method: "server/discover", Answered: true, Overdue: true},
		{ID: "2", Method: "initialize", Answered: true, Error: "-32022: connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted"},
		{ID: "3", Method: "tools/list", Answered: true},
		{ID: "4", Method: "tools/call", Tool: "a", Answered: true},
		{ID: "5", Method: "tools/call", Tool: "mcpchaos-no-such-tool", Deliberate: DeliberateUnknownTool, Answered: true, Error: "-32602: unknown tool"},
		{ID: "6", Method: "mcpchaos/no-such-method", Deliberate: DeliberateUnknownMethod, Answered: true, Error: "-32601: Method not found"},
	}
	if diff := cmp.Diff(want, out.Requests, ignoreTook); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
