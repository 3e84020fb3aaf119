package faults

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Frames of a stateful session up to a tool call in flight.
var (
	initReq     = frame{c2s, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}` + "\n"}
	initialized = notif(c2s, "notifications/initialized")
	// discover is a stateless-era request: server/discover.
	discover = frame{c2s, `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}` + "\n"}
	// statelessCall carries the per-request _meta of the 2026-07-28 era.
	statelessCall = frame{c2s, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}` + "\n"}
)

// handshake is initialize answered and initialized sent.
func handshake() []frame { return []frame{initReq, response(s2c, "0"), initialized} }

// firings says, per firing, where it fired and what it did: its detail and
// the frames it injected, in order.
func firings(ds []decision) []string {
	var out []string
	for _, d := range ds {
		s := d.String() + ": " + d.Effect.Detail
		if d.Effect.Skipped {
			s += " [skipped]"
		}
		out = append(out, s)
		for _, inj := range d.Effect.Inject {
			out = append(out, "  "+inj.Dir.String()+" "+strings.TrimSuffix(string(inj.Raw), "\n"))
		}
	}
	return out
}

func TestInjectionFaults(t *testing.T) {
	tests := []struct {
		name   string
		specs  []string
		frames []frame
		want   []string
	}{
		// server-request
		{
			name:   "server-request: roots/list right after the tool call is forwarded",
			specs:  []string{"server-request"},
			frames: append(handshake(), request(c2s, "2", "tools/call", "")),
			want: []string{
				`#4 after server-request#1: inject roots/list (id "mcpchaos-inject-1") toward the client`,
				`  s2c {"jsonrpc":"2.0","id":"mcpchaos-inject-1","method":"roots/list"}`,
			},
		},
		{
			name:   "server-request: ping, ids numbered per session across faults",
			specs:  []string{"server-request:method=ping,times=2", "early-request"},
			frames: append(handshake(), request(c2s, "2", "tools/call", ""), request(c2s, "3", "tools/call", "")),
			want: []string{
				`#3 before early-request#1: inject tools/list (id "mcpchaos-inject-1") toward the server`,
				`  c2s {"jsonrpc":"2.0","id":"mcpchaos-inject-1","method":"tools/list","params":{}}`,
				`#4 after server-request#1: inject ping (id "mcpchaos-inject-2") toward the client`,
				`  s2c {"jsonrpc":"2.0","id":"mcpchaos-inject-2","method":"ping"}`,
				`#5 after server-request#1: inject ping (id "mcpchaos-inject-3") toward the client`,
				`  s2c {"jsonrpc":"2.0","id":"mcpchaos-inject-3","method":"ping"}`,
			},
		},
		{
			name:   "server-request: skipped in the stateless era, and fires once a later call is stateful",
			specs:  []string{"server-request"},
			frames: []frame{discover, response(s2c, "0"), statelessCall, initReq, response(s2c, "0"), request(c2s, "5", "tools/call", "")},
			want: []string{
				`#3 after server-request#1: skipped: the client speaks the stateless 2026-07-28 protocol, which has no server-to-client requests [skipped]`,
				`#6 after server-request#1: inject roots/list (id "mcpchaos-inject-1") toward the client`,
				`  s2c {"jsonrpc":"2.0","id":"mcpchaos-inject-1","method":"roots/list"}`,
			},
		},
		// burst of resource updates
		{
			name:   "burst: resource updates name the uri given",
			specs:  []string{"burst:on=s2c:response:tools/call,position=before,method=notifications/resources/updated,count=2,uri=example://hello"},
			frames: append(handshake(), request(c2s, "2", "tools/call", ""), response(s2c, "2")),
			want: []string{
				`#5 before burst#1: inject 2 notifications/resources/updated toward the client`,
				`  s2c {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"example://hello"}}`,
				`  s2c {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"example://hello"}}`,
			},
		},
		// list-changed
		{
			name:   "list-changed: tools mid-call",
			specs:  []string{"list-changed"},
			frames: append(handshake(), request(c2s, "2", "tools/call", ""), response(s2c, "2")),
			want: []string{
				`#4 after list-changed#1: inject notifications/tools/list_changed toward the client`,
				`  s2c {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
			},
		},
		{
			name:   "list-changed: all three lists",
			specs:  []string{"list-changed:list=all,on=s2c:response:tools/call,position=before"},
			frames: append(handshake(), request(c2s, "2", "tools/call", ""), response(s2c, "2")),
			want: []string{
				`#5 before list-changed#1: inject notifications/{tools,prompts,resources}/list_changed toward the client`,
				`  s2c {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
				`  s2c {"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`,
				`  s2c {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
			},
		},
		// early-request
		{
			name:   "early-request: before initialized is forwarded",
			specs:  []string{"early-request:method=prompts/list"},
			frames: handshake(),
			want: []string{
				`#3 before early-request#1: inject prompts/list (id "mcpchaos-inject-1") toward the server`,
				`  c2s {"jsonrpc":"2.0","id":"mcpchaos-inject-1","method":"prompts/list","params":{}}`,
			},
		},
		{
			name:   "early-request: skipped in the stateless era",
			specs:  []string{"early-request:on=c2s:request:tools/call"},
			frames: []frame{discover, response(s2c, "0"), statelessCall},
			want: []string{
				`#3 before early-request#1: skipped: the client speaks the stateless 2026-07-28 protocol, which has no initialize handshake to come before [skipped]`,
			},
		},
		// cancel-task
		{
			name:  "cancel-task: on the status that says the task completed, the others skipped",
			specs: []string{"cancel-task:status=completed,times=0"},
			frames: append(handshake(),
				frame{s2c, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"working"}}` + "\n"},
				frame{s2c, `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"completed"}}` + "\n"}),
			want: []string{
				`#4 after cancel-task#1: skipped: task t1 is working, not completed [skipped]`,
				`#5 after cancel-task#1: inject tasks/cancel of task t1 (id "mcpchaos-inject-1") toward the server`,
				`  c2s {"jsonrpc":"2.0","id":"mcpchaos-inject-1","method":"tasks/cancel","params":{"taskId":"t1"}}`,
			},
		},
		{
			name:  "cancel-task: the task of a CreateTaskResult, and of a tasks/get result",
			specs: []string{"cancel-task:on=s2c:response,times=0"},
			frames: append(handshake(),
				frame{s2c, `{"jsonrpc":"2.0","id":5,"result":{"task":{"taskId":"t\"2","status":"working"}}}` + "\n"},
				frame{s2c, `{"jsonrpc":"2.0","id":6,"result":{"taskId":"t3","status":"working"}}` + "\n"},
				response(s2c, "7")),
			want: []string{
				// The handshake's initialize result names no task.
				`#2 after cancel-task#1: skipped: the message names no task [skipped]`,
				`#4 after cancel-task#1: inject tasks/cancel of task t"2 (id "mcpchaos-inject-1") toward the server`,
				`  c2s {"jsonrpc":"2.0","id":"mcpchaos-inject-1","method":"tasks/cancel","params":{"taskId":"t\"2"}}`,
				`#5 after cancel-task#1: inject tasks/cancel of task t3 (id "mcpchaos-inject-2") toward the server`,
				`  c2s {"jsonrpc":"2.0","id":"mcpchaos-inject-2","method":"tasks/cancel","params":{"taskId":"t3"}}`,
				`#6 after cancel-task#1: skipped: the message names no task [skipped]`,
			},
		},
		// cancel
		{
			name:   "cancel: the tool call just forwarded",
			specs:  []string{"cancel"},
			frames: append(handshake(), request(c2s, `"c1"`, "tools/call", "")),
			want: []string{
				`#4 after cancel#1: cancel tools/call (id "c1") toward the server`,
				`  c2s {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"mcpchaos fault cancel"}}`,
			},
		},
		{
			name:   "cancel: just before the response, toward the server",
			specs:  []string{"cancel:on=s2c:response:tools/call,position=before"},
			frames: append(handshake(), request(c2s, "2", "tools/call", ""), response(s2c, "2")),
			want: []string{
				`#5 before cancel#1: cancel tools/call (id 2) toward the server`,
				`  c2s {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"mcpchaos fault cancel"}}`,
			},
		},
		{
			name:   "cancel: a server request, toward the client",
			specs:  []string{"cancel:on=s2c:request:roots/list"},
			frames: append(handshake(), request(s2c, "9", "roots/list", "")),
			want: []string{
				`#4 after cancel#1: cancel roots/list (id 9) toward the client`,
				`  s2c {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"mcpchaos fault cancel"}}`,
			},
		},
		{
			name:   "cancel: skipped once the answer was forwarded, then fires on the next call",
			specs:  []string{"cancel:on=s2c:response:tools/call,position=after"},
			frames: append(handshake(), request(c2s, "2", "tools/call", ""), response(s2c, "2")),
			want: []string{
				`#5 after cancel#1: skipped: the answer to tools/call (id 2) reached the client already (fire with position=before) [skipped]`,
			},
		},
		{
			name:   "cancel: skipped before the request is forwarded",
			specs:  []string{"cancel:position=before"},
			frames: append(handshake(), request(c2s, "2", "tools/call", "")),
			want: []string{
				`#4 before cancel#1: skipped: tools/call (id 2) has not reached the server yet (fire with position=after) [skipped]`,
			},
		},
		{
			name:   "cancel: never initialize",
			specs:  []string{"cancel:on=c2s:request:initialize"},
			frames: handshake(),
			want:   []string{`#1 after cancel#1: skipped: initialize must not be cancelled [skipped]`},
		},
		{
			name:   "cancel: a notification triggers nothing to cancel",
			specs:  []string{"cancel:on=c2s:notification"},
			frames: handshake(),
			want:   []string{`#3 after cancel#1: skipped: the triggering message is not a request in flight nor an answer to one [skipped]`},
		},
		{
			name:  "cancel: the oldest request in flight, either way",
			specs: []string{"cancel:target=oldest,on=c2s:request:tools/call,nth=2"},
			frames: append(handshake(),
				request(s2c, "7", "sampling/createMessage", ""),
				request(c2s, "2", "tools/call", ""),
				request(c2s, "3", "tools/call", "")),
			want: []string{
				`#6 after cancel#1: cancel sampling/createMessage (id 7) toward the client`,
				`  s2c {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"mcpchaos fault cancel"}}`,
			},
		},
		{
			name:   "cancel: oldest skips initialize and finds nothing else",
			specs:  []string{"cancel:target=oldest,on=c2s:request:initialize"},
			frames: []frame{initReq},
			want:   []string{`#1 after cancel#1: skipped: no request is in flight (initialize, which must not be cancelled, and a request not yet forwarded do not count) [skipped]`},
		},
		{
			name:   "cancel: random never picks the triggering request before it is forwarded",
			specs:  []string{"cancel:target=random,on=c2s:request:tools/call,position=before,times=2"},
			frames: append(handshake(), request(c2s, "2", "tools/call", ""), request(c2s, "3", "tools/call", "")),
			want: []string{
				`#4 before cancel#1: skipped: no request is in flight (initialize, which must not be cancelled, and a request not yet forwarded do not count) [skipped]`,
				`#5 before cancel#1: cancel tools/call (id 2) toward the server`,
				`  c2s {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"mcpchaos fault cancel"}}`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := firings(runPlan(t, 1, tc.specs, tc.frames))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("firings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCancelRandomIsSeeded: target=random picks among the requests in
// flight by the seed, the same pick for the same seed, and some seed picks
// each of them.
func TestCancelRandomIsSeeded(t *testing.T) {
	frames := append(handshake(),
		request(c2s, "1", "tools/call", ""),
		request(c2s, "2", "tools/call", ""),
		request(c2s, "3", "tools/call", ""))
	spec := "cancel:target=random,on=c2s:request:tools/call,nth=3"
	picked := map[string]bool{}
	for seed := uint64(0); seed < 64; seed++ {
		a := firings(runPlan(t, seed, []string{spec}, frames))
		b := firings(runPlan(t, seed, []string{spec}, frames))
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("seed %d: two runs differ (-first +second):\n%s", seed, diff)
		}
		if len(a) != 2 {
			t.Fatalf("seed %d: firings %q; want one cancellation", seed, a)
		}
		picked[a[0]] = true
	}
	if len(picked) != 3 {
		t.Errorf("64 seeds picked %d distinct requests, want all 3: %v", len(picked), picked)
	}
}

// TestInjectedRequestsAreValid checks the params of every method
// server-request sends against what MCP 2025-11-25 requires of it.
func TestInjectedRequestsAreValid(t *testing.T) {
	required := map[string][]string{
		"roots/list":             nil,
		"ping":                   nil,
		"sampling/createMessage": {"messages", "maxTokens"},
		"elicitation/create":     {"message", "requestedSchema"},
	}
	for _, method := range serverRequestMethods {
		ds := runPlan(t, 1, []string{"server-request:method=" + method}, append(handshake(), request(c2s, "2", "tools/call", "")))
		if len(ds) != 1 || len(ds[0].Effect.Inject) != 1 {
			t.Fatalf("%s: firings %v; want one injection", method, firings(ds))
		}
		raw := ds[0].Effect.Inject[0].Raw
		m := wire.Classify(raw)
		if m.Kind != wire.Request || m.Method != method || !strings.HasPrefix(m.ID, wire.InjectIDPrefix) {
			t.Errorf("%s: injected %s: kind %s method %q id %s", method, raw, m.Kind, m.Method, m.ID)
		}
		var v struct {
			Params map[string]json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		want, ok := required[method]
		if !ok {
			t.Errorf("%s: no required params listed in this test", method)
		}
		for _, k := range want {
			if _, ok := v.Params[k]; !ok {
				t.Errorf("%s: params lack %q: %s", method, k, raw)
			}
		}
	}
}

func TestInjectionFaultsParse(t *testing.T) {
	for _, tc := range []struct {
		spec, on string
		phase    Phase
	}{
		{"server-request", "c2s:request:tools/call", After},
		{"list-changed", "c2s:request:tools/call", After},
		{"cancel", "c2s:request:tools/call", After},
		{"early-request", "c2s:notification:notifications/initialized", Before},
		{"cancel:on=s2c:response:tools/call,position=before", "s2c:response:tools/call", Before},
	} {
		f, err := Parse(tc.spec)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.spec, err)
		}
		want, _ := ParsePattern(tc.on)
		if diff := cmp.Diff(want, f.Trigger.On, cmpOpts); diff != "" || f.Trigger.Phase != tc.phase {
			t.Errorf("Parse(%q): on (-want +got):\n%s phase %v, want %v", tc.spec, diff, f.Trigger.Phase, tc.phase)
		}
	}
	for spec, want := range map[string]string{
		"server-request:method=tools/call":       `fault "server-request:method=tools/call": method: "tools/call" is not one of roots/list, sampling/createMessage, elicitation/create, ping`,
		"early-request:method=notifications/foo": `fault "early-request:method=notifications/foo": method: "notifications/foo" is a notification; early-request sends a request (tools/list, prompts/list, resources/list, ping, ...)`,
		"list-changed:list=roots":                `fault "list-changed:list=roots": list: "roots" is not one of tools, prompts, resources, all`,
		"cancel:target=newest":                   `fault "cancel:target=newest": target: "newest" is not one of trigger, oldest, random`,
	} {
		if _, err := Parse(spec); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v; want %s", spec, err, want)
		}
	}
}

// TestDefaultMomentIsDocumented: a family that fires at its own moment
// unless on= is given says which, since the listing prints only the Doc; and
// the moment parses.
func TestDefaultMomentIsDocumented(t *testing.T) {
	for _, fam := range Families() {
		if fam.On == "" {
			continue
		}
		if _, err := ParsePattern(fam.On); err != nil {
			t.Errorf("%s: default on=%s: %v", fam.Name, fam.On, err)
		}
		if !strings.Contains(fam.Doc, "default on="+fam.On) {
			t.Errorf("%s: Doc does not say %q", fam.Name, "default on="+fam.On)
		}
	}
}
