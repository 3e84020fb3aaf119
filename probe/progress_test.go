package probe

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// slowToolServer has one tool, "slow", that reports progress every step for
// steps steps and then answers, like server-everything's
// trigger-long-running-operation; with stopAfter > 0 it goes quiet after that
// many steps and never answers.
func slowToolServer(t *testing.T, step time.Duration, steps, stopAfter int) func(f *fake) {
	return func(f *fake) {
		f.serve(t, func(m msg, line string) bool {
			if f.stateful(m, `[{"name":"slow","inputSchema":{"type":"object"}}]`) {
				return true
			}
			if m.Method != "tools/call" || m.Params.Name != "slow" {
				f.refuse(m, "slow")
				return true
			}
			var call struct {
				Params struct {
					Meta struct {
						ProgressToken json.RawMessage `json:"progressToken"`
					} `json:"_meta"`
				} `json:"params"`
			}
			_ = json.Unmarshal([]byte(line), &call)
			id := m.ID
			go func() {
				for i := 1; i <= steps; i++ {
					select {
					case <-time.After(step):
					case <-f.release:
						return
					}
					if stopAfter > 0 && i > stopAfter {
						return
					}
					f.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":%d}}`, call.Params.Meta.ProgressToken, i, steps))
				}
				f.send(result(id, `{"content":[]}`))
			}()
			return true
		})
	}
}

// A tool that takes three deadlines but reports progress more often than
// one deadline is waited for, not given up (issue 9: server-everything's
// long-running operation).
func TestProgressKeepsACallAlive(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, slowToolServer(t, 150*time.Millisecond, 6, 0))
	var overdue overdueLog
	out, _, err := run(t, Config{Deadline: 300 * time.Millisecond, Concurrency: 1, Overdue: overdue.record}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []Request{
		{ID: "1", Method: "server/discover", Answered: true, Error: "-32601: Method not found"},
		{ID: "2", Method: "initialize", Answered: true},
		{ID: "3", Method: "tools/list", Answered: true},
		{ID: "4", Method: "tools/call", Tool: "slow", Answered: true},
		{ID: "5", Method: "tools/call", Tool: "mcpchaos-no-such-tool", Deliberate: DeliberateUnknownTool, Answered: true, Error: "-32602: unknown tool"},
		{ID: "6", Method: "mcpchaos/no-such-method", Deliberate: DeliberateUnknownMethod, Answered: true, Error: "-32601: Method not found"},
		{ID: "7", Method: "ping", Answered: true},
	}
	if diff := cmp.Diff(want, out.Requests, ignoreTook); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if got := overdue.sorted(); len(got) > 0 {
		t.Errorf("overdue: %v, want none: progress kept the call alive", got)
	}
}

// Progress that stops leaves the call overdue one deadline after the last
// notification, and the probe says how long it waited.
func TestProgressThatStopsIsOverdue(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, slowToolServer(t, 150*time.Millisecond, 10, 3))
	var overdue overdueLog
	start := time.Now()
	out, _, err := run(t, Config{Deadline: 300 * time.Millisecond, Concurrency: 1, Overdue: overdue.record}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]string{"4 tools/call"}, overdue.sorted()); diff != "" {
		t.Errorf("overdue (-want +got):\n%s", diff)
	}
	call := out.Requests[3]
	if call.Answered || !call.Overdue {
		t.Errorf("call = %+v, want overdue and unanswered", call)
	}
	// Three steps of 150ms, then the 300ms deadline: overdue at about 750ms,
	// given up 300ms (the grace, capped at the deadline) later.
	if took := time.Since(start); took < 900*time.Millisecond {
		t.Errorf("Run took %v: the call was given up before its progress stopped", took)
	}
}

// Progress never keeps a call waited for past MaxDeadline.
func TestProgressStopsAtMaxDeadline(t *testing.T) {
	checkNoGoroutineLeak(t)
	r, w, _ := startFake(t, slowToolServer(t, 100*time.Millisecond, 100, 0))
	var overdue overdueLog
	start := time.Now()
	out, _, err := run(t, Config{Deadline: 300 * time.Millisecond, MaxDeadline: 800 * time.Millisecond, Concurrency: 1, Overdue: overdue.record}, r, w)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]string{"4 tools/call"}, overdue.sorted()); diff != "" {
		t.Errorf("overdue (-want +got):\n%s", diff)
	}
	if out.Requests[3].Answered {
		t.Errorf("the call was answered; want it given up at the maximum")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Run took %v: the maximum did not end the wait", took)
	}
}
