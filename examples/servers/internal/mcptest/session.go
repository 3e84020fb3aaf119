package mcptest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Era names what a session negotiated.
const (
	Stateful  = "stateful"
	Stateless = "stateless"
)

// PlainSessions runs PlainSession on both twins (buggy and --fixed) in both
// eras, in parallel: a planted bug must hide from a plain session.
func PlainSessions(t *testing.T) {
	for _, v := range Variants {
		for _, era := range Eras {
			t.Run(v.Name+"/"+era.Name, func(t *testing.T) {
				t.Parallel()
				PlainSession(t, era.PreferStateless, v.Args...)
			})
		}
	}
}

// PlainSession drives a fresh server (args as for Start) through the no-fault
// session mcpchaos's baseline runs, and fails t unless it is clean. It opens
// the session as a probing client does: with server/discover when
// preferStateless is set, falling back to initialize when the server answers
// "method not found"; it returns the era it settled on. Then it lists the
// tools, calls each with simple arguments, makes three calls at once, closes
// stdin and expects the server to exit 0 promptly.
//
// Clean means: every line on stdout is a JSON-RPC 2.0 message; every request
// is answered exactly once and nothing else is answered; server requests
// (roots/list) are answered by this client; no tool call fails; stderr shows
// no panic, fatal error or data race.
func PlainSession(t *testing.T, preferStateless bool, args ...string) (era string) {
	t.Helper()
	p := Start(t, args...)
	era = p.Open(preferStateless)

	var names []string
	for _, tool := range p.Result(p.Request("tools/list", nil))["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	for _, name := range names {
		p.expectToolResult(name, p.CallTool(name, SimpleArgs(name), "tok-"+name))
	}
	var ids []string
	for i := range 3 {
		ids = append(ids, p.CallTool("slow", map[string]any{}, fmt.Sprint("tok-", i)))
	}
	for _, id := range ids {
		p.expectToolResult("slow", id)
	}
	if era == Stateful {
		p.Result(p.Request("ping", nil))
	}

	p.CloseStdin()
	if code, ok := p.Exit(Wait); !ok {
		t.Errorf("the server did not exit within %v of its stdin closing", Wait)
	} else if code != 0 {
		t.Errorf("the server exited with status %d", code)
	}
	p.ExpectClean()
	return era
}

// Open starts the session: server/discover if preferStateless, else (or if
// the server does not know server/discover) initialize and
// notifications/initialized. It returns the era.
func (p *Proc) Open(preferStateless bool) string {
	p.t.Helper()
	if preferStateless {
		p.Stateless = true
		id := p.Request("server/discover", nil)
		m, ok := p.Response(id, Wait)
		if !ok {
			p.t.Fatalf("no answer to server/discover within %v", Wait)
		}
		if m.Error == nil {
			r := p.Result(id)
			if !slices.Contains(r["supportedVersions"].([]any), any("2026-07-28")) {
				p.t.Fatalf("server/discover does not offer 2026-07-28: %s", m.Raw)
			}
			return Stateless
		}
		if m.Error.Code != -32601 {
			p.t.Fatalf("server/discover failed other than with \"method not found\": %s", m.Raw)
		}
		p.Stateless = false
	}
	r := p.Result(p.Request("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"roots": map[string]any{"listChanged": true}},
		"clientInfo":      map[string]any{"name": "mcptest", "version": "1"},
	}))
	if r["protocolVersion"] != "2025-11-25" {
		p.t.Fatalf("initialize negotiated %v, want 2025-11-25", r["protocolVersion"])
	}
	p.Notify("notifications/initialized", nil)
	return Stateful
}

// SimpleArgs are the arguments a plain session gives a tool: a text for echo,
// nothing (the defaults) for the rest.
func SimpleArgs(tool string) map[string]any {
	if tool == "echo" {
		return map[string]any{"text": "hello"}
	}
	return map[string]any{}
}

func (p *Proc) expectToolResult(name, id string) {
	p.t.Helper()
	if r := p.Result(id); r["isError"] == true {
		p.t.Errorf("tool %s failed: %v", name, r["content"])
	}
}

// ExpectClean fails the test unless everything the server wrote so far is
// clean in the sense of PlainSession.
func (p *Proc) ExpectClean() {
	p.t.Helper()
	p.mu.Lock()
	sent := slices.Clone(p.sent)
	p.mu.Unlock()
	answers := map[string]int{}
	for _, m := range p.Messages() {
		switch {
		case !m.JSON:
			p.t.Errorf("stdout has a line that is not JSON-RPC: %q", m.Raw)
		case m.RPC != "2.0":
			p.t.Errorf("stdout has a message without jsonrpc 2.0: %q", m.Raw)
		case m.IsResponse():
			answers[string(m.ID)]++
			if !slices.Contains(sent, string(m.ID)) {
				p.t.Errorf("a response to id %s, which was never sent: %q", m.ID, m.Raw)
			}
		}
	}
	for _, id := range sent {
		if n := answers[id]; n != 1 {
			p.t.Errorf("request %s was answered %d times, want once", id, n)
		}
	}
	for _, sign := range []string{"panic:", "fatal error:", "DATA RACE"} {
		if strings.Contains(p.Stderr(), sign) {
			p.t.Errorf("stderr shows %q:\n%s", sign, p.Stderr())
		}
	}
}

// Variant is one twin of an example: the buggy server or the fixed one.
type Variant struct {
	Name  string   // "buggy" or "fixed", for subtest names
	Args  []string // the server's arguments
	Fixed bool
}

// Variants are both twins, buggy first.
var Variants = []Variant{{Name: "buggy"}, {Name: "fixed", Args: []string{"--fixed"}, Fixed: true}}

// Eras are the two ways PlainSession can open a session, for subtest loops:
// preferStateless false and true.
var Eras = []struct {
	Name            string
	PreferStateless bool
}{{Stateful, false}, {Stateless, true}}
