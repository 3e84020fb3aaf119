package probe

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpchaos/mcpchaos/examples/everything"
)

// everythingTools are the tools of examples/everything, as it lists them.
var everythingTools = []string{"big", "echo", "elicit", "list_changed", "log", "ping_client", "research", "roots", "sample", "slow", "touch"}

// TestEverythingStateless runs the default workload against the real mcp-go
// server, which offers the stateless revision.
func TestEverythingStateless(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w := serveEverything(t)
	var overdue overdueLog
	out, _, err := run(t, Config{Overdue: overdue.record}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkIDs(t, out.Requests)
	want := &Outcome{
		Era:             EraStateless,
		ProtocolVersion: "2026-07-28",
		ServerName:      "mcpchaos-everything",
		Tools:           everythingTools,
		Initialized:     true,
		Requests: []Request{
			// The summarize prompt's style, then the item template's id
			// (the greet prompt's name is asked too, and offered nothing).
			{Method: "completion/complete", Answered: true},
			{Method: "completion/complete", Answered: true},
			{Method: "completion/complete", Answered: true},
			{Method: "mcpchaos/no-such-method", Deliberate: DeliberateUnknownMethod, Answered: true, Error: "-32601: Method mcpchaos/no-such-method not found"},
			{Method: "prompts/get", Target: "greet", Answered: true},
			{Method: "prompts/get", Target: "summarize", Answered: true},
			{Method: "prompts/list", Answered: true},
			{Method: "resources/list", Answered: true},
			{Method: "resources/read", Target: everything.HelloURI, Answered: true},
			{Method: "resources/read", Target: "example://items/1", Answered: true},
			{Method: "resources/templates/list", Answered: true},
			{Method: "server/discover", Answered: true},
			{Method: "tools/call", Tool: "big", Answered: true},
			{Method: "tools/call", Tool: "echo", Answered: true},
			// Sent to be refused: mcp-go refuses missing arguments with a
			// tool error, an unknown tool with a JSON-RPC error.
			{Method: "tools/call", Tool: "echo", Deliberate: DeliberateBadArguments, Answered: true, ToolError: `required argument "text" not found`},
			{Method: "tools/call", Tool: "elicit", Answered: true},
			{Method: "tools/call", Tool: "elicit", Answered: true},
			{Method: "tools/call", Tool: "list_changed", Answered: true},
			{Method: "tools/call", Tool: "log", Answered: true},
			{Method: "tools/call", Tool: "mcpchaos-no-such-tool", Deliberate: DeliberateUnknownTool, Answered: true, Error: "-32602: tool 'mcpchaos-no-such-tool' not found: tool not found"},
			// The bundled server's ping_client fails as it should in the
			// stateless revision: a tool error, not a protocol error.
			{Method: "tools/call", Tool: "ping_client", Answered: true,
				ToolError: "protocol revision 2026-07-28 has no server-to-client requests, so the client cannot be pinged"},
			{Method: "tools/call", Tool: "research", Answered: true},
			{Method: "tools/call", Tool: "sample", Answered: true},
			{Method: "tools/call", Tool: "sample", Answered: true},
			// The stateless roots tool answers input_required; the retry
			// carries the roots.
			{Method: "tools/call", Tool: "roots", Answered: true},
			{Method: "tools/call", Tool: "roots", Answered: true},
			{Method: "tools/call", Tool: "slow", Answered: true},
			// Not subscribed (the revision has no resources/subscribe):
			// touch sends no update.
			{Method: "tools/call", Tool: "touch", Answered: true},
			{Method: "tools/list", Answered: true},
		},
		// slow's five progress notifications, research's three,
		// list_changed's three; log sends none, as the requests ask for no
		// log level.
		Notifications: 11,
		// The stateless revision has no ping, no logging/setLevel, no
		// resources/subscribe, and its tasks are an extension.
		Coverage: &Coverage{
			Callable:   []string{"tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list", "completion/complete"},
			Sent:       []string{"tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list", "completion/complete"},
			Deliberate: []string{DeliberateUnknownTool, DeliberateBadArguments, DeliberateUnknownMethod},
		},
	}
	// Calls run concurrently, so only the set of requests is fixed.
	if diff := gocmp.Diff(want, out, ignoreTook, cmpopts.IgnoreFields(Request{}, "ID"), sortRequests); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if calls := overdue.sorted(); len(calls) != 0 {
		t.Errorf("Overdue called for %v", calls)
	}
}

// TestEverythingStateful forces the initialize era on the same server, where
// the roots tool asks the probe with a roots/list request.
func TestEverythingStateful(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w := serveEverything(t)
	out, _, err := run(t, Config{Era: EraStateful, Calls: []Call{{Tool: "roots"}, {Tool: "sample"}, {Tool: "elicit"}, {Tool: "ping_client"}}, Concurrency: 1}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := &Outcome{
		Era:             EraStateful,
		ProtocolVersion: "2025-11-25",
		ServerName:      "mcpchaos-everything",
		Tools:           everythingTools,
		Initialized:     true,
		Requests: []Request{
			{ID: "1", Method: "initialize", Answered: true},
			{ID: "2", Method: "tools/list", Answered: true},
			{ID: "3", Method: "logging/setLevel", Answered: true},
			{ID: "4", Method: "prompts/list", Answered: true},
			{ID: "5", Method: "resources/list", Answered: true},
			{ID: "6", Method: "resources/templates/list", Answered: true},
			{ID: "7", Method: "completion/complete", Answered: true},
			{ID: "8", Method: "completion/complete", Answered: true},
			{ID: "9", Method: "completion/complete", Answered: true},
			{ID: "10", Method: "prompts/get", Target: "greet", Answered: true},
			{ID: "11", Method: "prompts/get", Target: "summarize", Answered: true},
			{ID: "12", Method: "resources/read", Target: everything.HelloURI, Answered: true},
			{ID: "13", Method: "resources/read", Target: "example://items/1", Answered: true},
			{ID: "14", Method: "resources/subscribe", Target: everything.HelloURI, Answered: true},
			{ID: "15", Method: "tools/call", Tool: "roots", Answered: true},
			{ID: "16", Method: "tools/call", Tool: "sample", Answered: true},
			{ID: "17", Method: "tools/call", Tool: "elicit", Answered: true},
			{ID: "18", Method: "tools/call", Tool: "ping_client", Answered: true},
			{ID: "19", Method: "tools/call", Tool: "mcpchaos-no-such-tool", Deliberate: DeliberateUnknownTool, Answered: true, Error: "-32602: tool 'mcpchaos-no-such-tool' not found: tool not found"},
			// No bad arguments: they would go to a tool among the calls
			// given, and none of them takes arguments.
			{ID: "20", Method: "resources/unsubscribe", Target: everything.HelloURI, Answered: true},
			{ID: "21", Method: "mcpchaos/no-such-method", Deliberate: DeliberateUnknownMethod, Answered: true, Error: "-32601: Method mcpchaos/no-such-method not found"},
			{ID: "22", Method: "ping", Answered: true},
		},
		ServerRequests: []string{"roots/list", "sampling/createMessage", "elicitation/create", "ping"},
		Coverage: &Coverage{
			Callable: []string{"ping", "tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list",
				"resources/subscribe", "resources/unsubscribe", "logging/setLevel", "completion/complete", MethodToolCallTask, "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"},
			Sent: []string{"ping", "tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list",
				"resources/subscribe", "resources/unsubscribe", "logging/setLevel", "completion/complete"},
			// research, which runs as a task, is not among the calls.
			NotSent: []NotSent{
				{MethodToolCallTask, "none of the tools given with --call supports tasks (execution.taskSupport)"},
				{"tasks/get", "no tool could be called as a task"},
				{"tasks/result", "no tool could be called as a task"},
				{"tasks/list", "no tool could be called as a task"},
				{"tasks/cancel", "no tool could be called as a task"},
			},
			Deliberate: []string{DeliberateUnknownTool, DeliberateUnknownMethod},
		},
	}
	if diff := gocmp.Diff(want, out, ignoreTook); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}

// TestEverythingCalls covers which tools get called: generated, explicit,
// skipped, unknown.
func TestEverythingCalls(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		want    []string // tools called, sorted
		wantErr error
	}{
		{
			name: "every listed tool",
			cfg:  Config{},
			want: []string{"big", "echo", "elicit", "elicit", "list_changed", "log", "ping_client", "research", "roots", "roots", "sample", "sample", "slow", "touch"},
		},
		{
			name: "explicit calls",
			cfg: Config{Calls: []Call{
				{Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`)},
				{Tool: "slow", Args: json.RawMessage(`{"ms":20,"steps":2}`)},
				{Tool: "echo", Args: json.RawMessage(`{"text":"again"}`)},
			}},
			want: []string{"echo", "echo", "slow"},
		},
		{
			name: "MinCalls repeats the calls in order",
			cfg:  Config{Calls: []Call{{Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`)}, {Tool: "list_changed"}}, MinCalls: 5},
			want: []string{"echo", "echo", "echo", "list_changed", "list_changed"},
		},
		{
			name: "no calls",
			cfg:  Config{Calls: []Call{}},
		},
		{
			name: "skip tools",
			cfg:  Config{SkipTools: []string{"big", "slow", "roots", "sample", "elicit", "ping_client", "log", "research", "touch", "not-a-tool"}},
			want: []string{"echo", "list_changed"},
		},
		{
			name: "skip applies to explicit calls",
			cfg:  Config{Calls: []Call{{Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`)}, {Tool: "slow"}}, SkipTools: []string{"slow"}},
			want: []string{"echo"},
		},
		{
			name:    "unknown tool",
			cfg:     Config{Calls: []Call{{Tool: "echo"}, {Tool: "nope"}}},
			wantErr: &UnknownToolError{Tool: "nope", Known: everythingTools},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			r, w := serveEverything(t)
			out, _, err := run(t, tt.cfg, r, w)
			if diff := gocmp.Diff(tt.wantErr, err, gocmp.Comparer(func(a, b error) bool {
				var ua, ub *UnknownToolError
				if errors.As(a, &ua) && errors.As(b, &ub) {
					return gocmp.Equal(ua, ub)
				}
				return a == b
			})); diff != "" {
				t.Errorf("Run error (-want +got):\n%s", diff)
			}
			var called []string
			for _, req := range out.Requests {
				if req.Method == "tools/call" && req.Deliberate == "" {
					called = append(called, req.Tool)
					if !req.Answered || req.Error != "" {
						t.Errorf("call %+v failed", req)
					}
				}
			}
			slices.Sort(called)
			if diff := gocmp.Diff(tt.want, called); diff != "" {
				t.Errorf("tools called (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownToolError(t *testing.T) {
	tests := []struct {
		err  *UnknownToolError
		want string
	}{
		{&UnknownToolError{Tool: "x", Known: []string{"a", "b"}}, `tool "x" is not listed by the server (it lists: a, b)`},
		{&UnknownToolError{Tool: "x"}, `tool "x" is not listed by the server, which lists no tools`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// sortRequests orders requests by what they are, for outcomes whose order
// depends on concurrency.
var sortRequests = cmpopts.SortSlices(func(a, b Request) bool {
	return cmp.Or(cmp.Compare(a.Method, b.Method), cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Deliberate, b.Deliberate)) < 0
})

// checkIDs checks that ids count from 1 in the order requests were sent.
func checkIDs(t *testing.T, reqs []Request) {
	t.Helper()
	for i, req := range reqs {
		if want := strconv.Itoa(i + 1); req.ID != want {
			t.Errorf("request %d has id %s, want %s", i, req.ID, want)
		}
	}
}
