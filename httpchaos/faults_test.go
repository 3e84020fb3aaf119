package httpchaos_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Every fault mcpchaos proxy claims works on HTTP, each against mcp-go's
// streamable HTTP server and client (well-behaved peers): the fault fires
// (not skipped), the client's calls end within their deadline either way,
// no goroutine outlives the session (TestMain), and the judge finds what
// the specification says of the server, which is nothing.
func TestEveryHTTPFaultAgainstMCPGo(t *testing.T) {
	specs := map[string]string{
		"delay":          "delay:on=s2c:response:tools/call,for=50ms",
		"drop":           "drop:on=s2c:notification:notifications/progress",
		"duplicate":      "duplicate:on=s2c:notification:notifications/progress",
		"corrupt":        "corrupt:on=s2c:notification:notifications/progress",
		"oversize":       "oversize:on=s2c:notification:notifications/progress,size=64KiB",
		"eof":            "eof:on=c2s:request:tools/call",
		"stall":          "stall:on=s2c:notification:notifications/progress,for=200ms",
		"burst":          "burst:on=s2c:notification:notifications/progress,count=5",
		"list-changed":   "list-changed:on=s2c:notification:notifications/progress",
		"server-request": "server-request:method=ping,on=s2c:notification:notifications/progress",
		"cancel":         "cancel:on=c2s:request:tools/call",
		"early-request":  "early-request",
		"id-type":        "id-type:on=c2s:request:tools/call",
		"id-collision":   "id-collision:on=c2s:request:tools/call",
		"mutate":         "mutate:on=c2s:request:tools/call,field=/params/arguments/ms,op=retype",
		"fragment":       "fragment:on=s2c:notification:notifications/progress",
		"http-error":     "http-error:on=c2s:request:tools/call,status=503",
		"reset":          "reset:on=c2s:request:tools/call",
		"end-session":    "end-session:on=c2s:request:tools/call,inflight=2",
		"forget-session": "forget-session:on=c2s:request:tools/call",
		"hold-headers":   "hold-headers:on=c2s:request:tools/call,for=200ms",
		"event-id-reuse": "event-id-reuse:on=s2c:response:tools/call",
		"signal":         "signal:on=c2s:request:tools/call,sig=TERM",
		"foreign-origin": "foreign-origin:on=s2c:response:tools/call",
		"forge-origin":   "forge-origin:on=c2s:request:tools/call,forge=origin",
		"credentials":    "credentials:on=s2c:response:tools/call",
	}
	var claimed []string
	for f := range specs {
		claimed = append(claimed, f)
	}
	if diff := cmp.Diff(httpchaos.Families(), claimed, cmp.Transformer("sorted", sortedCopy)); diff != "" {
		t.Fatalf("families claimed on HTTP without a case here (-claimed +tested):\n%s", diff)
	}
	// mcp-go's default session manager serves any well-formed session
	// id, so there is no session for forget-session to make it forget:
	// the stateful one keeps them, as a server that answers 404 must.
	options := map[string][]server.StreamableHTTPOption{"forget-session": {server.WithStateful(true)}}
	// mcp-go 1.2.1 checks a request's Host, not its Origin: the
	// specification's MUST is the Origin check, and a page whose request
	// reaches it under an accepted Host (or with Origin: null) is served.
	wantRules := map[string][]string{"foreign-origin": {reports.RuleForeignOriginServed, reports.RuleNullOriginServed},
		"forge-origin": {reports.RuleForeignOriginServed}}
	for _, family := range httpchaos.Families() {
		t.Run(family, func(t *testing.T) {
			r := startRigWith(t, options[family], 1, specs[family])
			var dial []transport.StreamableHTTPCOption
			if family == "credentials" {
				// What it changes: mcp-go's server wants none, and
				// serves the requests without them (not judged).
				dial = append(dial, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer tok3n-abc"}))
			}
			c := r.dial(t, mcp.ProtocolVersion20251125, dial...)
			// Two calls in flight at once, each reporting progress, so that
			// every trigger above has its moment.
			var wg sync.WaitGroup
			for _, token := range []string{"p1", "p2"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					start := time.Now()
					_, _ = call(c, 3*time.Second, "slow", map[string]any{"ms": 300, "steps": 3}, token)
					if d := time.Since(start); d > 4*time.Second {
						t.Errorf("a call took %v, past its deadline", d)
					}
				}()
			}
			wg.Wait()
			if family == "foreign-origin" {
				// Its requests go beside the session: the session waits
				// for their answers before it ends.
				waitFor(t, 5*time.Second, func() bool { return countForged(r.rec.Events()) == 4 })
			}
			if family == "credentials" {
				waitFor(t, 5*time.Second, func() bool { return countForged(r.rec.Events()) == 5 })
			}
			c.Close()
			v := r.end(t)
			var fired []string
			for _, e := range r.rec.Events() {
				if e.Type == wire.EventFault && e.Action == family && !strings.HasPrefix(e.Detail, "skipped") {
					fired = append(fired, e.Detail)
				}
			}
			t.Logf("fired %q; indeterminate %q; notes %q", fired, v.Indeterminate, v.Notes)
			if len(fired) == 0 {
				t.Errorf("%s never fired", specs[family])
			}
			var rules []string
			for _, f := range v.Findings {
				rules = append(rules, f.Rule)
			}
			if diff := cmp.Diff(wantRules[family], rules); diff != "" {
				t.Errorf("findings' rules (-want +got):\n%s", diff)
				for _, f := range v.Findings {
					t.Logf("finding: %s %s: %s", f.Kind, f.Rule, f.Message)
				}
			}
		})
	}
}

func sortedCopy(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// countForged counts the requests a fault sent beside the session (not the
// DELETEs of the sessions they opened).
func countForged(events []wire.Event) int {
	n := 0
	for _, e := range events {
		if e.Type == wire.EventForeign && e.Forged != "" {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds, or fails the test after d.
func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("not so after %s", d)
		}
	}
}
