package httpchaos_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpchaos/mcpchaos/wire"
)

// Issue 41: fault forge-origin rewrites the client's own request. mcp-go
// refuses a foreign Host, so the rebinding forgery of the client's call
// reaches the client as the server's refusal, the record says what was
// forged in place of what, and nothing is held against the server.
func TestForgeOriginOfARefusedCallReachesTheClient(t *testing.T) {
	r := startRigWith(t, nil, 1, "forge-origin:on=c2s:request:tools/call,forge=rebinding")
	c := r.dial(t, mcp.ProtocolVersion20251125)
	if _, err := call(c, 3*time.Second, "slow", map[string]any{"ms": 10, "steps": 1}, "p1"); err == nil {
		t.Error("the call sent on with a foreign Host and Origin succeeded; want the server's refusal")
	}
	// The session goes on: an unforged call is served.
	if _, err := call(c, 3*time.Second, "slow", map[string]any{"ms": 10, "steps": 1}, "p2"); err != nil {
		t.Errorf("the next call, not forged: %v", err)
	}
	c.Close()
	v := r.end(t)
	var forged *wire.Event
	status := 0
	for _, e := range r.rec.Events() {
		if e.Type == wire.EventHTTP && e.Action == "forge-origin" {
			forged = &e
		}
		if forged != nil && e.Type == wire.EventHTTP && e.Exchange == forged.Exchange && e.Status != 0 && status == 0 {
			status = e.Status
		}
	}
	if forged == nil {
		t.Fatal("no forge-origin http event in the record")
	}
	if forged.Forged != "rebinding" || forged.Method != "tools/call" || !strings.Contains(forged.Detail, "Origin: http://evil.example:") ||
		!strings.Contains(forged.Detail, "in place of the client's Host: 127.0.0.1:") {
		t.Errorf("forge event = %+v; want the rebinding forgery of tools/call, with what it replaced", forged)
	}
	if status < 400 {
		t.Errorf("the server answered the forged call with status %d; want a refusal", status)
	}
	for _, f := range v.Findings {
		t.Errorf("finding against a server that refused the forgery: %s %s: %s", f.Kind, f.Rule, f.Message)
	}
}
