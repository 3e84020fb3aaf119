package probe

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Bounds on the task workload (MCP 2025-11-25, Basic › Utilities › Tasks).
const (
	// MaxTaskCalls bounds the tools called as tasks.
	MaxTaskCalls = 4
	// taskTTL is the lifetime the probe asks for, in milliseconds: longer
	// than any wait of the probe's, so the server may not delete a task
	// the probe still follows.
	taskTTL = 60000
	// The poll interval the probe uses: the server's pollInterval, kept
	// within these bounds so that a server that suggests none, or an
	// hour, still gets polled at a pace a run can afford.
	defaultPollInterval = 250 * time.Millisecond
	minPollInterval     = 50 * time.Millisecond
	maxPollInterval     = time.Second
)

// Task statuses.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

func terminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// taskState is a task as the server last described it.
type taskState struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	PollInterval  *int64 `json:"pollInterval"`
}

// taskWork is what the task part of the workload does: call Calls as
// tasks, follow each to its end, and cancel one more task of Cancel's tool
// (nil: none).
type taskWork struct {
	calls  []Call
	cancel *Call
	list   bool
}

// planTasks picks the tools called as tasks: those that may only be called
// so first, then those that may be (at most MaxTaskCalls in all), and the
// task to cancel. Without tasks.requests.tools.call no tool may be called
// as a task, whatever its taskSupport says.
func (s *session) planTasks(caps serverCapabilities, tools []listedTool) taskWork {
	tc := caps.tasks()
	w := taskWork{list: tc.List}
	if !tc.ToolCalls || s.stateless() {
		// In the 2026-07-28 revision tasks are an extension whose
		// protocol differs (see serverCapabilities.callable).
		return taskWork{}
	}
	var required, optional []Call
	for _, t := range tools {
		explicit, asked := s.explicitCall(t.Name)
		if slices.Contains(s.cfg.SkipTools, t.Name) || (s.cfg.Calls != nil && !asked) {
			// Skipped, or not among the calls the user gave.
			continue
		}
		c := Call{Tool: t.Name, Args: s.arguments(t.InputSchema)}
		if asked {
			c = explicit
		}
		switch t.Execution.TaskSupport {
		case "required":
			required = append(required, c)
		case "optional":
			optional = append(optional, c)
		}
	}
	w.calls = append(required, optional...)
	if len(w.calls) > MaxTaskCalls {
		s.sampled("tools/call as a task: the first " + strconv.Itoa(MaxTaskCalls) + " of " + strconv.Itoa(len(w.calls)) + " tools that support tasks")
		w.calls = w.calls[:MaxTaskCalls]
	}
	if len(w.calls) == 0 {
		if s.cfg.Calls != nil {
			s.why(MethodToolCallTask, "none of the tools given with --call supports tasks (execution.taskSupport)")
		} else {
			s.why(MethodToolCallTask, "no listed tool supports tasks (execution.taskSupport)")
		}
		return w
	}
	if tc.Cancel {
		w.cancel = &w.calls[0]
	}
	return w
}

// explicitCall is the --call given for a tool, if any.
func (s *session) explicitCall(tool string) (Call, bool) {
	for _, c := range s.cfg.Calls {
		if c.Tool == tool {
			return c, true
		}
	}
	return Call{}, false
}

// runTasks does the task workload: it creates the tasks one by one, lists
// them while they run, and follows them side by side; it returns once each
// is over (or the session has ended).
func (s *session) runTasks(w taskWork) {
	var wg sync.WaitGroup
	defer wg.Wait()
	created := 0
	for _, c := range w.calls {
		t := s.createTask(c)
		if t == nil {
			continue
		}
		created++
		wg.Go(func() { s.followTask(t) })
	}
	if w.cancel != nil {
		// Created before the listing, which then holds every task of
		// the session; cancelled at once, beside the others' polling.
		if t := s.createTask(*w.cancel); t != nil {
			wg.Go(func() { s.cancelTask(t) })
		} else {
			s.why("tasks/cancel", "the task to cancel was not created")
		}
	}
	switch {
	case created == 0 && len(w.calls) > 0:
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"} {
			s.why(m, "no task was created: the task-augmented tools/call was not answered with a task")
		}
	case len(w.calls) == 0:
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"} {
			s.why(m, "no tool could be called as a task")
		}
	case w.list:
		// While the tasks run: "if a task is retrievable via tasks/get for
		// a requestor, it MUST be retrievable via tasks/list".
		s.listPages("tasks/list", func(json.RawMessage) {})
	}
}

// createTask calls a tool as a task and returns the task, or nil when the
// server answered something else (an error, or a plain result: a server
// may run a call it cannot make a task of as a normal request).
func (s *session) createTask(c Call) *taskState {
	if !s.goOn(MethodToolCallTask) {
		return nil
	}
	fields := map[string]any{"name": c.Tool, "arguments": c.Args, "task": map[string]any{"ttl": taskTTL}}
	p, err := s.request("tools/call", s.params(fields, nil, s.stateless()), c.Tool)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	s.requests[p.idx].AsTask = true
	s.mu.Unlock()
	<-p.done
	var r struct {
		Task *taskState `json:"task"`
	}
	if p.result == nil || json.Unmarshal(p.result, &r) != nil || r.Task == nil || r.Task.TaskID == "" {
		return nil
	}
	return r.Task
}

// followTask follows a task as a requestor should: poll tasks/get at the
// server's pollInterval until the task is terminal, call tasks/result once
// it is (or as soon as it needs input: the server's requests for it come
// through tasks/result), and stop polling once the task has stayed unchanged
// for the deadline and the grace, or MaxDeadline after it was created: the
// judge decides from the transcript whether it was stuck.
func (s *session) followTask(t *taskState) {
	created := time.Now()
	changed := created
	var result *pending
	defer func() {
		if result != nil {
			<-result.done
		}
	}()
	askResult := func() {
		if result == nil {
			result, _ = s.request("tasks/result", s.params(map[string]any{"taskId": t.TaskID}, nil, s.stateless()), t.TaskID)
		}
	}
	for !terminal(t.Status) {
		if t.Status == taskInputRequired {
			askResult()
		}
		// Past the deadline and the grace a request gets before it is
		// given up: the judge holds a task unchanged for the deadline
		// against the server, and the last poll shows it was.
		if time.Since(changed) > s.cfg.Deadline+s.grace || time.Since(created) > s.cfg.MaxDeadline {
			s.why("tasks/result", fmt.Sprintf("task %s was still %s when the probe stopped polling it", t.TaskID, t.Status))
			return
		}
		if !s.pause(pollInterval(t)) {
			return
		}
		next, ok := s.getTask(t.TaskID)
		if !ok {
			s.why("tasks/result", fmt.Sprintf("tasks/get of task %s was not answered with its status", t.TaskID))
			return
		}
		if next.Status != t.Status || next.StatusMessage != t.StatusMessage || next.LastUpdatedAt != t.LastUpdatedAt {
			changed = time.Now()
			if result != nil {
				// tasks/result is held until the task ends: a task that
				// moves keeps it waited for, as progress keeps a call.
				select {
				case result.progressed <- struct{}{}:
				default:
				}
			}
		}
		t = next
	}
	askResult()
}

// cancelTask cancels a task just created: the cancellation races
// the task's work, and the server must end up with the task cancelled (or
// refuse the cancellation of a task already terminal, -32602) and keep it
// so. One tasks/get after the answer shows the status it kept.
func (s *session) cancelTask(t *taskState) {
	s.roundTrip("tasks/cancel", map[string]any{"taskId": t.TaskID}, t.TaskID)
	s.getTask(t.TaskID)
}

func (s *session) getTask(id string) (*taskState, bool) {
	result, ok := s.roundTrip("tasks/get", map[string]any{"taskId": id}, id)
	if !ok {
		return nil, false
	}
	var t taskState
	if json.Unmarshal(result, &t) != nil || t.Status == "" {
		return nil, false
	}
	if t.TaskID == "" {
		t.TaskID = id
	}
	return &t, true
}

func pollInterval(t *taskState) time.Duration {
	if t.PollInterval == nil {
		return defaultPollInterval
	}
	return min(max(time.Duration(*t.PollInterval)*time.Millisecond, minPollInterval), maxPollInterval)
}

// pause waits d, or less if the session ends; it says whether the session
// goes on.
func (s *session) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !s.ended()
	case <-s.ctx.Done():
	case <-s.broken:
	case <-s.outputEnded:
	case <-s.stopping:
	}
	return false
}
