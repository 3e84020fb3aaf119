package probe

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestExpandTemplate(t *testing.T) {
	values := map[string]string{"id": "1", "path": "a/b c", "q": "x&y"}
	value := func(name string) string { return values[name] }
	tests := []struct{ template, want string }{
		{"demo://resource/dynamic/text/{id}", "demo://resource/dynamic/text/1"},
		{"file:///{path}", "file:///a%2Fb%20c"},
		{"file:///{+path}", "file:///a/b%20c"},
		{"greeting://{id}{/path}", "greeting://1/a%2Fb%20c"},
		{"search://{id}{?q,id}", "search://1?q=x%26y&id=1"},
		{"x://{id}{&q}", "x://1&q=x%26y"},
		{"x://{id:3}/{path*}", "x://1/a%2Fb%20c"},
		{"x://{#path}", "x://#a/b%20c"},
		{"x://{.id}{;id}", "x://.1;id=1"},
		{"no-vars", "no-vars"},
		{"unclosed/{id", "unclosed/{id"},
	}
	for _, tt := range tests {
		if got := expandTemplate(tt.template, value); got != tt.want {
			t.Errorf("expandTemplate(%q) = %q, want %q", tt.template, got, tt.want)
		}
	}
	if diff := cmp.Diff([]string{"id", "path", "q"}, templateVars("x://{id}/{+path}{?q,id}")); diff != "" {
		t.Errorf("templateVars (-want +got):\n%s", diff)
	}
}

// A sample is a fair, bounded choice fixed by the seed: the same listing and
// seed give the same sample, another seed (almost always) another one.
func TestSampleIsSeededAndBounded(t *testing.T) {
	pick := func(seed uint64, n int) []int {
		s := newSample[int](8, seed, "resources")
		for i := range n {
			s.offer(i)
		}
		return s.items()
	}
	if got := pick(1, 5); !cmp.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("a listing shorter than the sample is kept whole, in order: got %v", got)
	}
	a, b := pick(7, 1000), pick(7, 1000)
	if !cmp.Equal(a, b) || len(a) != 8 {
		t.Errorf("the same seed gave %v and %v; want the same 8 items", a, b)
	}
	if cmp.Equal(a, pick(8, 1000)) {
		t.Errorf("seeds 7 and 8 chose the same 8 of 1000: %v", a)
	}
	for i := 1; i < len(a); i++ {
		if a[i] <= a[i-1] {
			t.Errorf("sample %v is not in listing order", a)
		}
	}
	// Every item is as likely as any other: over many seeds, the last item
	// of 100 is chosen about 8 times in 100.
	last := 0
	for seed := range uint64(2000) {
		if s := pick(seed, 100); s[len(s)-1] == 99 {
			last++
		}
	}
	if last < 100 || last > 220 {
		t.Errorf("the last of 100 items was sampled %d times in 2000 runs, want about 160", last)
	}
}

// fullServer declares every capability the probe exercises and answers as
// server-everything does: prompts (one with a completable argument),
// resources on two pages, a template, subscriptions, logging, completions
// and a tool that may only run as a task, whose task takes three polls. It
// records the tasks/cancel it gets.
type fullServer struct {
	t       *testing.T
	mu      sync.Mutex
	polls   map[string]int
	cancels []string
}

const fullCapabilities = `{"tools":{},"prompts":{},"resources":{"subscribe":true},"logging":{},"completions":{},` +
	`"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`

func (s *fullServer) serve(f *fake) {
	tasks := 0
	f.serve(s.t, func(m msg, line string) bool {
		var p struct {
			Params struct {
				TaskID string `json:"taskId"`
				URI    string `json:"uri"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(line), &p)
		id := p.Params.TaskID
		switch m.Method {
		case "server/discover":
			f.send(methodNotFound(m.ID))
		case "initialize":
			f.send(result(m.ID, `{"protocolVersion":"2025-11-25","capabilities":`+fullCapabilities+`,"serverInfo":{"name":"full","version":"1"}}`))
		case "tools/list":
			f.send(result(m.ID, `{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},`+
				`{"name":"research","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`))
		case "prompts/list":
			f.send(result(m.ID, `{"prompts":[{"name":"plain"},{"name":"team","arguments":[{"name":"department","required":true},{"name":"note"}]}]}`))
		case "resources/list":
			if m.Params.Cursor == "" {
				f.send(result(m.ID, `{"resources":[{"uri":"doc://a","name":"a"}],"nextCursor":"2"}`))
			} else {
				f.send(result(m.ID, `{"resources":[{"uri":"doc://b","name":"b"}]}`))
			}
		case "resources/templates/list":
			f.send(result(m.ID, `{"resourceTemplates":[{"uriTemplate":"item://{id}","name":"item"}]}`))
		case "completion/complete":
			if strings.Contains(line, `"department"`) {
				f.send(result(m.ID, `{"completion":{"values":["Engineering","Sales"]}}`))
			} else {
				f.send(result(m.ID, `{"completion":{"values":[]}}`))
			}
		case "prompts/get":
			f.send(result(m.ID, `{"messages":[]}`))
		case "resources/read":
			f.send(result(m.ID, `{"contents":[{"uri":`+fmt.Sprintf("%q", p.Params.URI)+`,"text":"x"}]}`))
		case "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "ping":
			f.send(result(m.ID, `{}`))
		case "tools/call":
			switch {
			case m.Params.Name == "research" && m.Params.Task != nil:
				tasks++
				f.send(result(m.ID, fmt.Sprintf(`{"task":{"taskId":"t%d","status":"working","pollInterval":10,"ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}}`, tasks)))
			case m.Params.Name == "echo" && strings.Contains(string(m.Params.Arguments), "text"):
				f.send(result(m.ID, `{"content":[]}`))
			default:
				f.send(invalidParams(m.ID, "no"))
			}
		case "tasks/get":
			s.mu.Lock()
			s.polls[id]++
			status := "working"
			if s.polls[id] >= 3 {
				status = "completed"
			}
			if slices.Contains(s.cancels, id) {
				status = "cancelled"
			}
			s.mu.Unlock()
			f.send(result(m.ID, fmt.Sprintf(`{"taskId":%q,"status":%q,"pollInterval":10,"statusMessage":"poll %d"}`, id, status, s.polls[id])))
		case "tasks/result":
			f.send(result(m.ID, `{"content":[{"type":"text","text":"done"}]}`))
		case "tasks/cancel":
			s.mu.Lock()
			s.cancels = append(s.cancels, id)
			s.mu.Unlock()
			f.send(result(m.ID, fmt.Sprintf(`{"taskId":%q,"status":"cancelled"}`, id)))
		case "tasks/list":
			f.send(result(m.ID, `{"tasks":[]}`))
		default:
			f.refuse(m)
		}
		return true
	})
}

// The workload reaches every request the capabilities make callable, with
// the values completion offered, and follows the task to its end.
func TestEveryDeclaredMethodIsSent(t *testing.T) {
	checkNoGoroutineLeak(t)
	srv := &fullServer{t: t, polls: map[string]int{}}
	r, w, f := startFake(t, srv.serve)
	out, _, err := run(t, Config{Concurrency: 1, Deadline: 2 * time.Second}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := &Coverage{
		Callable: []string{"ping", "tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list", "resources/read",
			"resources/templates/list", "resources/subscribe", "resources/unsubscribe", "logging/setLevel", "completion/complete",
			MethodToolCallTask, "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"},
		Deliberate: []string{DeliberateUnknownTool, DeliberateBadArguments, DeliberateUnknownMethod},
	}
	want.Sent = want.Callable
	if diff := cmp.Diff(want, out.Coverage); diff != "" {
		t.Errorf("coverage (-want +got):\n%s", diff)
	}
	if len(out.TaskOnlyTools) != 0 {
		t.Errorf("TaskOnlyTools = %v, want none: research was called as a task", out.TaskOnlyTools)
	}
	lines := strings.Join(f.lines(), "\n")
	for _, want := range []string{
		`"method":"logging/setLevel","params":{"level":"info"}`,
		// The earlier argument goes in the completion's context.
		`"context":{"arguments":{"department":"Engineering"}}`,
		// Required arguments only, valued by completion.
		`"method":"prompts/get","params":{"arguments":{"department":"Engineering"},"name":"team"}`,
		`"method":"resources/list","params":{"cursor":"2"}`,
		`"method":"resources/read","params":{"uri":"doc://b"}`,
		`"method":"resources/read","params":{"uri":"item://1"}`,
		`"method":"resources/subscribe","params":{"uri":"doc://a"}`,
		`"method":"resources/unsubscribe","params":{"uri":"doc://a"}`,
		`"name":"research","task":{"ttl":60000}`,
		`"method":"tasks/result","params":{"taskId":"t1"}`,
		`"method":"tasks/cancel","params":{"taskId":"t2"}`,
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("the probe never wrote %s; it wrote:\n%s", want, lines)
		}
	}
	// Polled at the server's pollInterval until completed, then no more.
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.polls["t1"] != 3 {
		t.Errorf("task t1 was polled %d times, want 3 (working, working, completed)", srv.polls["t1"])
	}
}

// A server whose listing hands out the same cursor again would keep a
// client that follows it listing for ever: the probe stops at the repeat
// and says so.
func TestRepeatedCursorEndsTheListing(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, func(f *fake) {
		f.serve(t, func(m msg, _ string) bool {
			switch {
			case m.Method == "initialize":
				f.send(result(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"prompts":{}},"serverInfo":{"name":"loop","version":"1"}}`))
			case m.Method == "prompts/list" && m.Params.Cursor == "":
				f.send(result(m.ID, `{"prompts":[{"name":"a"}],"nextCursor":"p2"}`))
			case m.Method == "prompts/list":
				f.send(result(m.ID, `{"prompts":[{"name":"b"}],"nextCursor":"p2"}`))
			case m.Method == "prompts/get", m.Method == "ping":
				f.send(result(m.ID, `{"messages":[]}`))
			default:
				f.refuse(m)
			}
			return true
		})
	})
	out, _, err := run(t, Config{Deadline: time.Second}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	lists, gets := 0, 0
	for _, req := range out.Requests {
		switch req.Method {
		case "prompts/list":
			lists++
		case "prompts/get":
			gets++
		}
	}
	if lists != 2 || gets != 2 {
		t.Errorf("%d prompts/list and %d prompts/get, want 2 (the first page, then p2, which hands out p2 again) and 2", lists, gets)
	}
	if diff := cmp.Diff([]string{`prompts/list: stopped following the listing when the server handed out cursor "p2" a second time`}, out.Coverage.Sampled); diff != "" {
		t.Errorf("sampled (-want +got):\n%s", diff)
	}
}

// Once a request goes unanswered, the workload beyond the tool calls stops:
// every further request to a server that does not answer would cost a
// deadline and show nothing new. The coverage says why.
func TestUnansweredRequestStopsTheSurface(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, func(f *fake) {
		f.serve(t, func(m msg, _ string) bool {
			switch m.Method {
			case "initialize":
				f.send(result(m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"prompts":{},"resources":{}},"serverInfo":{"name":"stuck","version":"1"}}`))
			case "prompts/list":
				// Never answered.
			case "ping":
				f.send(result(m.ID, `{}`))
			default:
				f.refuse(m)
			}
			return true
		})
	})
	start := time.Now()
	out, _, err := run(t, Config{Deadline: 300 * time.Millisecond}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Run took %v: the unanswered prompts/list should have stopped the rest", took)
	}
	var methods []string
	for _, req := range out.Requests {
		methods = append(methods, req.Method)
	}
	if diff := cmp.Diff([]string{"server/discover", "initialize", "prompts/list", "ping"}, methods); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	wantNot := []NotSent{
		{Method: "prompts/get", Why: "the server had left prompts/list (id 3) unanswered"},
		{Method: "resources/list", Why: "the server had left prompts/list (id 3) unanswered"},
		{Method: "resources/read", Why: "the server had left prompts/list (id 3) unanswered"},
		{Method: "resources/templates/list", Why: "the server had left prompts/list (id 3) unanswered"},
	}
	if diff := cmp.Diff(wantNot, out.Coverage.NotSent); diff != "" {
		t.Errorf("not sent (-want +got):\n%s", diff)
	}
}
