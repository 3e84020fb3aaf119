package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// ask is a client request with params, relayed to the server.
func (b *tb) ask(id, method, params string) int64 {
	seq := b.recv("c2s", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	b.fwd("c2s", seq)
	return seq
}

// result is the server's result for id.
func (b *tb) result(id, result string) int64 {
	return b.replyRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result))
}

// refuse is the server's JSON-RPC error for id.
func (b *tb) refuse(id string, code int) int64 {
	return b.replyRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"no"}}`, id, code))
}

// note is a notification from the server.
func (b *tb) note(method, params string) int64 {
	return b.replyRaw(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params))
}

// task creates task id with request n: a task-augmented tools/call and its
// CreateTaskResult.
func (b *tb) task(n, id string) {
	b.ask(n, "tools/call", `{"name":"research","arguments":{},"task":{"ttl":60000}}`)
	b.result(n, fmt.Sprintf(`{"task":{"taskId":%q,"status":"working","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}}`, id))
}

func (b *tb) poll(n, id, status, message string) {
	b.ask(n, "tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
	b.result(n, fmt.Sprintf(`{"taskId":%q,"status":%q,"statusMessage":%q,"ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`, id, status, message))
}

// Each surface rule has a case that breaks it and one just inside it, so
// that a check that fires too eagerly fails as surely as one that never does.
func TestSurfaceRules(t *testing.T) {
	tests := []struct {
		name    string
		session func(b *tb)
		want    []string // rules
		message string   // of the first finding, if set
	}{
		{"a debug message after the level was set to info", func(b *tb) {
			b.ask("1", "logging/setLevel", `{"level":"info"}`)
			b.result("1", `{}`)
			b.note("notifications/message", `{"level":"info","data":"fine"}`)
			b.note("notifications/message", `{"level":"debug","data":"too low"}`)
		}, []string{reports.RuleLogBelowLevel}, `log messages below the level "info" the client set with logging/setLevel: debug`},
		{"a debug message before the level was answered", func(b *tb) {
			b.note("notifications/message", `{"level":"debug","data":"before"}`)
			b.ask("1", "logging/setLevel", `{"level":"info"}`)
			b.note("notifications/message", `{"level":"debug","data":"racing the answer"}`)
			b.result("1", `{}`)
			b.note("notifications/message", `{"level":"warning","data":"fine"}`)
		}, nil, ""},
		{"a level refused", func(b *tb) {
			b.ask("1", "logging/setLevel", `{"level":"info"}`)
			b.refuse("1", -32602)
			b.note("notifications/message", `{"level":"debug","data":"the level was never set"}`)
		}, nil, ""},
		{"an update for a resource never subscribed", func(b *tb) {
			b.ask("1", "resources/subscribe", `{"uri":"doc://a"}`)
			b.result("1", `{}`)
			b.note("notifications/resources/updated", `{"uri":"doc://a"}`)
			b.note("notifications/resources/updated", `{"uri":"doc://a/part"}`)
			b.note("notifications/resources/updated", `{"uri":"doc://b"}`)
		}, []string{reports.RuleUpdateNotSubscribed}, "notifications/resources/updated for a resource the client was not subscribed to: doc://b (never subscribed)"},
		{"an update after the unsubscribe was answered", func(b *tb) {
			b.ask("1", "resources/subscribe", `{"uri":"doc://a"}`)
			b.result("1", `{}`)
			b.ask("2", "resources/unsubscribe", `{"uri":"doc://a"}`)
			b.note("notifications/resources/updated", `{"uri":"doc://a"}`)
			b.result("2", `{}`)
			b.note("notifications/resources/updated", `{"uri":"doc://a"}`)
		}, []string{reports.RuleUpdateNotSubscribed}, "notifications/resources/updated for a resource the client was not subscribed to: doc://a (after its unsubscribe was answered)"},
		{"a cursor handed out twice in one listing", func(b *tb) {
			b.ask("1", "resources/list", `{}`)
			b.result("1", `{"resources":[],"nextCursor":"p2"}`)
			b.ask("2", "resources/list", `{"cursor":"p2"}`)
			b.result("2", `{"resources":[],"nextCursor":"p2"}`)
		}, []string{reports.RuleListCursorRepeats}, `a listing handed out a cursor it had already handed out, so following nextCursor never ends: resources/list "p2"`},
		{"the same cursor in two listings", func(b *tb) {
			for _, id := range []string{"1", "3"} {
				b.ask(id, "prompts/list", `{}`)
				b.result(id, `{"prompts":[],"nextCursor":"p2"}`)
				b.ask(id+"0", "prompts/list", `{"cursor":"p2"}`)
				b.result(id+"0", `{"prompts":[]}`)
			}
		}, nil, ""},
		{"a task polled unchanged past the deadline", func(b *tb) {
			b.task("1", "t1")
			for i, ms := range []float64{1000, 3000, 6500} {
				b.at(ms).poll(fmt.Sprint(i+2), "t1", "working", "stage 1")
			}
		}, []string{reports.RuleTaskNeverFinished}, "task t1 was still working, unchanged for 5.5s, when tasks/get last answered; it never reached a terminal status"},
		{"a task stopped only as the server shuts down", func(b *tb) {
			b.task("1", "t1")
			for i, ms := range []float64{1000, 3000, 6500} {
				b.at(ms).poll(fmt.Sprint(i+2), "t1", "working", "stage 1")
			}
			b.clientClosed()
			b.note("notifications/tasks/status", `{"taskId":"t1","status":"failed","statusMessage":"context canceled","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`)
		}, []string{reports.RuleTaskNeverFinished}, ""},
		{"a slow task that reports its stages", func(b *tb) {
			b.task("1", "t1")
			for i, ms := range []float64{2000, 4000, 6000, 8000} {
				b.at(ms).poll(fmt.Sprint(i+2), "t1", "working", fmt.Sprint("stage ", i))
			}
		}, nil, ""},
		{"a task waiting on a question a fault kept from the client", func(b *tb) {
			b.task("1", "t1")
			seq := b.recv("s2c", `{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}`)
			b.drop("s2c", seq, "cut by fault eof#1")
			for i, ms := range []float64{1000, 3000, 6500} {
				b.at(ms).poll(fmt.Sprint(i+2), "t1", "working", "")
			}
		}, nil, ""},
		{"a task polled until the session was cut", func(b *tb) {
			b.task("1", "t1")
			b.at(2000).poll("2", "t1", "working", "stage 1")
			b.eofFault()
		}, nil, ""},
		{"a completed task reported working to a later poll", func(b *tb) {
			b.task("1", "t1")
			b.note("notifications/tasks/status", `{"taskId":"t1","status":"completed","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`)
			b.poll("2", "t1", "working", "")
		}, []string{reports.RuleTaskLeftTerminal}, "a task reported in a terminal status was reported in another one afterwards: t1 (completed, then working)"},
		{"a cancel answered cancelled after the task completed", func(b *tb) {
			b.task("1", "t1")
			b.poll("2", "t1", "completed", "")
			b.ask("3", "tasks/cancel", `{"taskId":"t1"}`)
			b.result("3", `{"taskId":"t1","status":"cancelled","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`)
		}, []string{reports.RuleTaskLeftTerminal}, ""},
		{"a cancel of a completed task refused, as it must be", func(b *tb) {
			b.task("1", "t1")
			b.poll("2", "t1", "completed", "")
			b.ask("3", "tasks/cancel", `{"taskId":"t1"}`)
			b.refuse("3", -32602)
			b.ask("4", "tasks/result", `{"taskId":"t1"}`)
			b.result("4", `{"content":[]}`)
		}, nil, ""},
		{"a stale working notification after completed", func(b *tb) {
			b.task("1", "t1")
			b.poll("2", "t1", "completed", "")
			b.note("notifications/tasks/status", `{"taskId":"t1","status":"working","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`)
		}, nil, ""},
		{"tasks/result refused for a completed task", func(b *tb) {
			b.task("1", "t1")
			b.poll("2", "t1", "completed", "")
			b.ask("3", "tasks/result", `{"taskId":"t1"}`)
			b.refuse("3", -32602)
		}, []string{reports.RuleTaskResultLost}, ""},
		{"tasks/result refused for a failed task: the underlying error", func(b *tb) {
			b.task("1", "t1")
			b.poll("2", "t1", "failed", "")
			b.ask("3", "tasks/result", `{"taskId":"t1"}`)
			b.refuse("3", -32603)
		}, nil, ""},
		{"a tool error for a task reported completed", func(b *tb) {
			b.task("1", "t1")
			b.poll("2", "t1", "completed", "")
			b.ask("3", "tasks/result", `{"taskId":"t1"}`)
			b.result("3", `{"content":[],"isError":true}`)
		}, []string{reports.RuleTaskCompletedFailing}, ""},
		{"tasks/get refused for a task handed out", func(b *tb) {
			b.task("1", "t1")
			b.ask("2", "tasks/get", `{"taskId":"t1"}`)
			b.refuse("2", -32602)
		}, []string{reports.RuleTaskForgotten}, ""},
		{"tasks/get refused for a cancelled task", func(b *tb) {
			b.task("1", "t1")
			b.ask("2", "tasks/cancel", `{"taskId":"t1"}`)
			b.result("2", `{"taskId":"t1","status":"cancelled","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`)
			b.ask("3", "tasks/get", `{"taskId":"t1"}`)
			b.refuse("3", -32602)
		}, nil, ""},
		{"tasks/get refused past the task's ttl", func(b *tb) {
			b.task("1", "t1")
			b.at(61000).ask("2", "tasks/get", `{"taskId":"t1"}`)
			b.refuse("2", -32602)
		}, nil, ""},
		{"a task cancelled with nobody asking (mcp-go #897)", func(b *tb) {
			b.task("1", "t1")
			b.note("notifications/tasks/status", `{"taskId":"t1","status":"cancelled","statusMessage":"context canceled","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`)
		}, []string{reports.RuleTaskCancelledUnasked}, "tasks reported cancelled though nobody cancelled them: their results are lost: t1"},
		{"a task cancelled as the client asked", func(b *tb) {
			b.task("1", "t1")
			b.ask("2", "tasks/cancel", `{"taskId":"t1"}`)
			b.note("notifications/tasks/status", `{"taskId":"t1","status":"cancelled","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`)
			b.result("2", `{"taskId":"t1","status":"cancelled","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`)
		}, nil, ""},
		{"a task cancelled as the session ends", func(b *tb) {
			b.task("1", "t1")
			b.eofFault()
			b.note("notifications/tasks/status", `{"taskId":"t1","status":"cancelled","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}`)
		}, nil, ""},
		{"tasks/list with another requestor's task", func(b *tb) {
			b.task("1", "t1")
			b.ask("2", "tasks/list", `{}`)
			b.result("2", `{"tasks":[{"taskId":"t1","status":"working","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"},{"taskId":"t0","status":"completed","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}]}`)
		}, []string{reports.RuleTaskNotOwned}, "tasks/list listed tasks this session never created: t0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTB()
			b.at(100)
			tt.session(b)
			b.at(9000).finish()
			v := Session(b.evs)
			if diff := cmp.Diff(tt.want, rulesOf(v)); diff != "" {
				t.Fatalf("rules (-want +got):\n%s\nfindings: %+v", diff, shorten(v.Findings))
			}
			if tt.message != "" && v.Findings[0].Message != tt.message {
				t.Errorf("message:\n got %q\nwant %q", v.Findings[0].Message, tt.message)
			}
		})
	}
}

// On HTTP a message on one stream may have been sent before the answer that
// travelled on another: a log message below the level, or an update after
// the unsubscribe, within 200 ms of the answer is not held against the
// server.
func TestSurfaceRacesOnHTTP(t *testing.T) {
	b := newTB()
	b.evs[0].URL = "http://127.0.0.1:1/mcp"
	b.at(100)
	b.ask("1", "logging/setLevel", `{"level":"info"}`)
	b.result("1", `{}`)
	b.at(150).note("notifications/message", `{"level":"debug","data":"racing"}`)
	b.ask("2", "resources/subscribe", `{"uri":"doc://a"}`)
	b.result("2", `{}`)
	b.ask("3", "resources/unsubscribe", `{"uri":"doc://a"}`)
	b.result("3", `{}`)
	b.at(200).note("notifications/resources/updated", `{"uri":"doc://a"}`)
	b.at(900).note("notifications/message", `{"level":"debug","data":"late"}`)
	b.at(9000).finish()
	v := Session(b.evs)
	if diff := cmp.Diff([]string{reports.RuleLogBelowLevel}, rulesOf(v)); diff != "" {
		t.Errorf("rules (-want +got):\n%s\n%+v", diff, shorten(v.Findings))
	}
}

// tasks/result asked while the task still runs is held until the task ends
// (a receiver MUST block it): each report that the task is still working
// restarts its deadline, as progress restarts a call's, so a long task
// asked early is no hang when the session ends while it runs; one whose
// reports stopped a deadline before is.
func TestTasksResultWaitsWhileTheTaskRuns(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lastPoll float64
		want     []string
	}{
		// Left unanswered when the client closed: what the stdio
		// shutdown allows, a warning, as any request in flight then.
		{"the task reports all along", 11000, []string{reports.RuleLostAtShutdown}},
		{"the reports stop", 3000, []string{reports.RuleUnanswered}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTB()
			b.at(100)
			b.task("1", "t1")
			b.poll("2", "t1", "input_required", "which topic?")
			b.ask("3", "tasks/result", `{"taskId":"t1"}`)
			n := 4
			for ms := 1000.0; ms <= tc.lastPoll; ms += 2000 {
				b.at(ms).poll(fmt.Sprint(n), "t1", "working", fmt.Sprint("stage ", n))
				n++
			}
			// The session ends with the task still running: its
			// tasks/result was not hung while the task reported, and is
			// when the reports stopped a deadline before.
			b.at(12000).finish()
			v := Session(b.evs)
			if diff := cmp.Diff(tc.want, rulesOf(v)); diff != "" {
				t.Errorf("rules (-want +got):\n%s\n%+v", diff, shorten(v.Findings))
			}
		})
	}
}

// Over HTTP the client's answer to the server's own request travels in a
// POST; refused with an error status (a fault forged its session id), it
// never reaches the server, whose handler waits on it: the call that
// handler serves is not a hang of the server's, as when mcpchaos drops the
// server's request itself.
func TestAnswerRefusedOnItsWayIsNotAHang(t *testing.T) {
	b := newTB()
	b.evs[0].URL = "http://127.0.0.1:1/mcp"
	b.at(100)
	b.call("5", "tools/call")
	ask := b.recv("s2c", `{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}`)
	b.fwd("s2c", ask)
	answer := b.recv("c2s", `{"jsonrpc":"2.0","id":0,"result":{"action":"decline"}}`)
	b.add(wire.Event{Type: wire.EventHTTP, Status: 400, Of: answer, Exchange: 9, Detail: "response: application/json"})
	b.at(9000).finish()
	v := Session(b.evs)
	if len(v.Findings) != 0 {
		t.Errorf("findings %+v, want none", shorten(v.Findings))
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "the answer to the server's elicitation/create (id 0), sent while it was open, never reached it (refused with HTTP 400)") {
		t.Errorf("notes %q do not say the answer was refused", v.Notes)
	}
}
