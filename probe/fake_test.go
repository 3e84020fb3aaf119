package probe

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// ignoreTook leaves out the one field of an Outcome that depends on timing.
var ignoreTook = cmpopts.IgnoreFields(Request{}, "Took")

// statefulServer speaks only the initialize era. Its "ask" tool asks the
// client for roots, a sampling, an elicitation, a ping and an unknown method
// mid-call, and answers the call once all five are answered; on the way it
// also sends a progress notification, a line that is not JSON and a response
// to an id the probe never used, which the probe must shrug off. Tools are
// listed on two pages.
func statefulServer(t *testing.T) func(f *fake) {
	return func(f *fake) {
		var call json.RawMessage
		waiting := 0
		for {
			line, ok := f.next()
			if !ok {
				return
			}
			m := parse(t, line)
			switch m.Method {
			case "server/discover":
				f.send(methodNotFound(m.ID))
			case "initialize":
				f.send(result(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{}},"serverInfo":{"name":"fake","version":"1"}}`))
			case "tools/list":
				if m.Params.Cursor == "" {
					f.send(result(m.ID, `{"tools":[{"name":"ask","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}],"nextCursor":"page2"}`))
				} else {
					f.send(result(m.ID, `{"tools":[{"name":"other","inputSchema":{"type":"object"}}]}`))
				}
			case "prompts/list":
				f.send(result(m.ID, `{"prompts":[]}`))
			case "tools/call":
				switch {
				case m.Params.Name == "other":
					f.send(result(m.ID, `{"content":[]}`))
					continue
				case m.Params.Name != "ask":
					f.send(invalidParams(m.ID, "unknown tool"))
					continue
				case !strings.Contains(string(m.Params.Arguments), `"q"`):
					f.send(invalidParams(m.ID, "q is required"))
					continue
				}
				call, waiting = m.ID, 5
				f.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpchaos-progress-1","progress":1}}`)
				f.send(`this is not JSON`)
				f.send(`{"jsonrpc":"2.0","id":999,"result":{}}`)
				f.send(`{"jsonrpc":"2.0","id":"r1","method":"roots/list"}`)
				f.send(`{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`)
				f.send(`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}`)
				f.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
				f.send(`{"jsonrpc":"2.0","id":5,"method":"weird/method"}`)
			case "ping":
				f.send(result(m.ID, `{}`))
			case "":
				// One of the probe's replies to the requests above.
				if waiting--; waiting == 0 {
					f.send(result(call, `{"content":[{"type":"text","text":"thanks"}]}`))
				}
			default:
				f.send(methodNotFound(m.ID))
			}
		}
	}
}

func TestStatefulFallback(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, f := startFake(t, statefulServer(t))
	// One call at a time makes the order of the lines the server reads fixed.
	out, _, err := run(t, Config{Concurrency: 1, Deadline: 2 * time.Second}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := &Outcome{
		Era:             EraStateful,
		ProtocolVersion: "2025-11-25",
		ServerName:      "fake",
		Tools:           []string{"ask", "other"},
		Initialized:     true,
		Requests: []Request{
			{ID: "1", Method: "server/discover", Answered: true, Error: "-32601: Method not found"},
			{ID: "2", Method: "initialize", Answered: true},
			{ID: "3", Method: "tools/list", Answered: true},
			{ID: "4", Method: "tools/list", Answered: true},
			{ID: "5", Method: "prompts/list", Answered: true},
			{ID: "6", Method: "tools/call", Tool: "ask", Answered: true},
			{ID: "7", Method: "tools/call", Tool: "other", Answered: true},
			{ID: "8", Method: "tools/call", Tool: "mcpchaos-no-such-tool", Deliberate: DeliberateUnknownTool, Answered: true, Error: "-32602: unknown tool"},
			{ID: "9", Method: "tools/call", Tool: "ask", Deliberate: DeliberateBadArguments, Answered: true, Error: "-32602: q is required"},
			{ID: "10", Method: "mcpchaos/no-such-method", Deliberate: DeliberateUnknownMethod, Answered: true, Error: "-32601: Method not found"},
			{ID: "11", Method: "ping", Answered: true},
		},
		ServerRequests: []string{"roots/list", "sampling/createMessage", "elicitation/create", "ping", "weird/method"},
		Notifications:  1,
		Coverage: &Coverage{
			Callable:   []string{"ping", "tools/list", "tools/call", "prompts/list", "prompts/get"},
			Sent:       []string{"ping", "tools/list", "tools/call", "prompts/list"},
			NotSent:    []NotSent{{Method: "prompts/get", Why: "the server listed no prompts"}},
			Deliberate: []string{DeliberateUnknownTool, DeliberateBadArguments, DeliberateUnknownMethod},
		},
	}
	if diff := cmp.Diff(want, out, ignoreTook); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}

	// Every byte the probe wrote, in order.
	const meta = `"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"mcpchaos-probe","version":"0.1.0"},` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	wantLines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{` + meta + `}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"mcpchaos-probe","version":"0.1.0"},"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"page2"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"_meta":{"progressToken":"mcpchaos-progress-1"},"arguments":{"q":"mcpchaos"},"name":"ask"}}`,
		`{"jsonrpc":"2.0","id":"r1","result":{"roots":[{"uri":"file:///tmp/mcpchaos","name":"mcpchaos"}]}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"role":"assistant","content":{"type":"text","text":"mcpchaos"},"model":"mcpchaos","stopReason":"endTurn"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"action":"decline"}}`,
		`{"jsonrpc":"2.0","id":4,"result":{}}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found: weird/method"}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":"mcpchaos-progress-2"},"arguments":{},"name":"other"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{},"name":"mcpchaos-no-such-tool"}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{},"name":"ask"}}`,
		`{"jsonrpc":"2.0","id":10,"method":"mcpchaos/no-such-method"}`,
		`{"jsonrpc":"2.0","id":11,"method":"ping"}`,
	}
	if diff := cmp.Diff(wantLines, f.lines()); diff != "" {
		t.Errorf("lines the server read (-want +got):\n%s", diff)
	}
}

// TestStatefulEra checks that Config.Era skips server/discover.
func TestStatefulEra(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, f := startFake(t, statefulServer(t))
	out, _, err := run(t, Config{Era: EraStateful, Calls: []Call{{Tool: "other"}}}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var methods []string
	for _, req := range out.Requests {
		methods = append(methods, req.Method)
	}
	if diff := cmp.Diff([]string{"initialize", "tools/list", "tools/list", "prompts/list", "tools/call", "tools/call", "mcpchaos/no-such-method", "ping"}, methods); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if got := f.lines()[0]; !strings.Contains(got, `"method":"initialize"`) {
		t.Errorf("first line = %s, want initialize", got)
	}
}

// silentServer reads everything and never answers, and does not exit when
// its stdin closes: the worst case for every wait of the probe.
func silentServer(f *fake) {
	for {
		if _, ok := f.next(); !ok {
			break
		}
	}
	<-f.release
}

func TestUnresponsiveServer(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, silentServer)
	var overdue overdueLog
	const deadline = 500 * time.Millisecond
	out, took, err := run(t, Config{Deadline: deadline, Overdue: overdue.record}, r, w)
	if !errors.Is(err, ErrNotInitialized) {
		t.Errorf("Run error = %v, want ErrNotInitialized", err)
	}
	// discover's short wait, initialize's deadline and grace, the 2s drain.
	if limit := deadline + 2*time.Second + 2*time.Second; took > limit {
		t.Errorf("Run took %v, want at most %v", took, limit)
	}
	want := &Outcome{
		Era: EraStateful,
		Requests: []Request{
			{ID: "1", Method: "server/discover", Error: "no answer within 1s", Overdue: true},
			{ID: "2", Method: "initialize", Error: "no answer within 1s", Overdue: true},
		},
	}
	if diff := cmp.Diff(want, out, ignoreTook); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1 server/discover", "2 initialize"}, overdue.sorted()); diff != "" {
		t.Errorf("Overdue calls (-want +got):\n%s", diff)
	}
}

// hangingCallsServer completes the handshake and listing but never answers a
// tool call; it exits when its stdin closes.
func hangingCallsServer(t *testing.T) func(f *fake) {
	return func(f *fake) {
		f.serve(t, func(m msg, _ string) bool {
			f.stateful(m, `[{"name":"a"},{"name":"b"},{"name":"c"}]`)
			return true
		})
	}
}

func TestHangingCalls(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, hangingCallsServer(t))
	var overdue overdueLog
	const deadline = 300 * time.Millisecond
	out, took, err := run(t, Config{Deadline: deadline, Concurrency: 2, Overdue: overdue.record}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Two rounds of calls (two, then one), each given up after deadline+grace.
	if limit := 4*deadline + 2*time.Second; took > limit {
		t.Errorf("Run took %v, want at most %v", took, limit)
	}
	want := []Request{
		{ID: "1", Method: "server/discover", Answered: true, Error: "-32601: Method not found"},
		{ID: "2", Method: "initialize", Answered: true},
		{ID: "3", Method: "tools/list", Answered: true},
		{ID: "4", Method: "tools/call", Tool: "a", Error: "no answer within 600ms", Overdue: true},
		{ID: "5", Method: "tools/call", Tool: "b", Error: "no answer within 600ms", Overdue: true},
		{ID: "6", Method: "tools/call", Tool: "c", Error: "no answer within 600ms", Overdue: true},
		{ID: "7", Method: "ping", Answered: true},
	}
	if diff := cmp.Diff(want, out.Requests, ignoreTook); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"4 tools/call", "5 tools/call", "6 tools/call"}, overdue.sorted()); diff != "" {
		t.Errorf("Overdue calls (-want +got):\n%s", diff)
	}
}

// deafServer never reads its stdin, so the probe's first write blocks for
// good, and never writes or exits.
func deafServer(f *fake) {
	<-f.release
}

func TestServerNotReading(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, deafServer)
	var overdue overdueLog
	const deadline = 300 * time.Millisecond
	out, took, err := run(t, Config{Deadline: deadline, Overdue: overdue.record}, r, w)
	if !errors.Is(err, ErrNotInitialized) {
		t.Errorf("Run error = %v, want ErrNotInitialized", err)
	}
	// discover's wait, initialize's deadline and grace, the writer's grace,
	// the drain.
	if limit := 5*deadline + 2*time.Second + time.Second; took > limit {
		t.Errorf("Run took %v, want at most %v", took, limit)
	}
	want := &Outcome{
		Era: EraStateful,
		Requests: []Request{
			{ID: "1", Method: "server/discover", Error: "not sent: still waiting to be written after 600ms"},
			{ID: "2", Method: "initialize", Error: "not sent: still waiting to be written after 600ms"},
		},
	}
	if diff := cmp.Diff(want, out, ignoreTook); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if got := overdue.sorted(); len(got) != 0 {
		t.Errorf("Overdue called for %v; the server never got those requests", got)
	}
}

// TestServerStopsReading: the server closes its stdin after the handshake, so
// the probe's next write fails; the workload ends there, gracefully.
func TestServerStopsReading(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, func(f *fake) {
		for {
			line, ok := f.next()
			if !ok {
				return
			}
			m := parse(t, line)
			switch m.Method {
			case "server/discover":
				f.send(methodNotFound(m.ID))
			case "initialize":
				f.send(result(m.ID, initializeResult))
			case "notifications/initialized":
				f.inR.Close()
				// Long enough for the write to fail before the output ends.
				time.Sleep(300 * time.Millisecond)
				return
			}
		}
	})
	out, took, err := run(t, Config{}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if took > 2*time.Second {
		t.Errorf("Run took %v, want it to end soon after the server stopped", took)
	}
	want := &Outcome{
		Era:             EraStateful,
		ProtocolVersion: "2025-11-25",
		ServerName:      "fake",
		Initialized:     true,
		Requests: []Request{
			{ID: "1", Method: "server/discover", Answered: true, Error: "-32601: Method not found"},
			{ID: "2", Method: "initialize", Answered: true},
			// notifications/initialized and tools/list leave in one write
			// (the writer gathers what is queued together), so the write
			// succeeds and the request is given up when the output ends.
			{ID: "3", Method: "tools/list", Error: "no answer: the server's output ended"},
		},
		Coverage: &Coverage{
			Callable: []string{"ping", "tools/list", "tools/call"},
			Sent:     []string{"tools/list"},
			NotSent:  []NotSent{{Method: "ping", Why: "the session ended first"}, {Method: "tools/call", Why: "the session ended first"}},
		},
	}
	if diff := cmp.Diff(want, out, ignoreTook); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}

// TestServerExits: the server's output ends mid-call; the call is given up at
// once rather than at its deadline.
func TestServerExits(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, func(f *fake) {
		for {
			line, ok := f.next()
			if !ok {
				return
			}
			m := parse(t, line)
			switch m.Method {
			case "server/discover":
				f.send(methodNotFound(m.ID))
			case "initialize":
				f.send(result(m.ID, initializeResult))
			case "tools/list":
				f.send(result(m.ID, `{"tools":[{"name":"a"}]}`))
			case "tools/call":
				// Keep reading, so that only the output ends.
				go func() { _, _ = io.Copy(io.Discard, f.in) }()
				return
			}
		}
	})
	out, took, err := run(t, Config{Deadline: 10 * time.Second}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if took > 2*time.Second {
		t.Errorf("Run took %v, want it to end soon after the server's output ended", took)
	}
	want := []Request{
		{ID: "1", Method: "server/discover", Answered: true, Error: "-32601: Method not found"},
		{ID: "2", Method: "initialize", Answered: true},
		{ID: "3", Method: "tools/list", Answered: true},
		{ID: "4", Method: "tools/call", Tool: "a", Error: "no answer: the server's output ended"},
	}
	if diff := cmp.Diff(want, out.Requests, ignoreTook); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestCancel(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, silentServer)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, err := Run(ctx, Config{Deadline: 10 * time.Second}, r, w)
	took := time.Since(start)
	t.Logf("Run took %v", took.Round(time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNotInitialized) {
		t.Errorf("Run error = %v, want ErrNotInitialized and context.DeadlineExceeded", err)
	}
	if took > time.Second {
		t.Errorf("Run took %v after its context ended", took)
	}
	want := []Request{{ID: "1", Method: "server/discover", Error: "cancelled: context deadline exceeded"}}
	if diff := cmp.Diff(want, out.Requests, ignoreTook); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"arguments not an object", Config{Calls: []Call{{Tool: "a", Args: json.RawMessage(`[1]`)}}}, &ArgsError{Tool: "a"}},
		{"arguments not JSON", Config{Calls: []Call{{Tool: "a", Args: json.RawMessage(`{`)}}}, &ArgsError{Tool: "a"}},
		{"unknown era", Config{Era: "modern"}, errors.New(`probe: era "modern" is not "stateful" or empty (negotiate)`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, f := startFake(t, deafServer)
			out, err := Run(context.Background(), tt.cfg, r, w)
			if out != nil {
				t.Errorf("Run returned an outcome for a bad config: %+v", out)
			}
			if err == nil || err.Error() != tt.want.Error() {
				t.Errorf("Run error = %v, want %v", err, tt.want)
			}
			var argsErr *ArgsError
			if _, want := tt.want.(*ArgsError); want != errors.As(err, &argsErr) {
				t.Errorf("Run error %T, want %T", err, tt.want)
			}
			// Both pipes are closed: the server saw EOF, nothing was written.
			if _, ok := f.next(); ok {
				t.Errorf("the probe wrote to the server")
			}
		})
	}
}

// A tool whose execution.taskSupport is "required" may only be called as a
// task (MCP 2025-11-25, Tasks): the TypeScript SDK's simpleStreamableHttp
// example lists two, and a plain call of either is answered -32601. The
// probe leaves them out of its generated calls and says which; an explicit
// --call of one is made as asked.
func TestTaskOnlyToolsAreLeftOut(t *testing.T) {
	tools := `[{"name":"delay","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},` +
		`{"name":"echo","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},` +
		`{"name":"plain","inputSchema":{"type":"object"}}]`
	for _, tc := range []struct {
		name      string
		calls     []Call
		wantTools []string
		wantOnly  []string
	}{
		{"generated calls", nil, []string{"echo", "plain"}, []string{"delay"}},
		{"an explicit call", []Call{{Tool: "delay", Args: json.RawMessage(`{}`)}}, []string{"delay"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			r, w, f := startFake(t, func(f *fake) {
				f.serve(t, func(m msg, _ string) bool {
					switch {
					case m.Method == "tools/call":
						f.send(result(m.ID, `{"content":[]}`))
					case !f.stateful(m, tools) && m.Method != "":
						f.send(methodNotFound(m.ID))
					}
					return true
				})
			})
			out, _, err := run(t, Config{Concurrency: 1, Deadline: 2 * time.Second, Calls: tc.calls}, r, w)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var called []string
			for _, req := range out.Requests {
				if req.Method == "tools/call" && req.Deliberate == "" {
					called = append(called, req.Tool)
				}
			}
			if diff := cmp.Diff(tc.wantTools, called); diff != "" {
				t.Errorf("tools called (-want +got):\n%s\nlines: %q", diff, f.lines())
			}
			if diff := cmp.Diff(tc.wantOnly, out.TaskOnlyTools); diff != "" {
				t.Errorf("TaskOnlyTools (-want +got):\n%s", diff)
			}
		})
	}
}
