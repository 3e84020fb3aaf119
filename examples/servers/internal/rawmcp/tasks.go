package rawmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"sync"
	"time"
)

// Tasks runs tools called as tasks (MCP 2025-11-25, Basic › Utilities ›
// Tasks): tools/call with params.task answered with a CreateTaskResult, the
// work in a goroutine of its own, tasks/get, tasks/result, tasks/list and
// tasks/cancel, and notifications/tasks/status on each change. Install it on
// a Server before Serve. Each of its bug fields is one planted server's bug;
// the zero value is a correct receiver.
type Tasks struct {
	// Work is a task's work: its text is the tool result's, an error ends
	// the task failed. status reports progress in the task's status
	// message. ctx ends when the task is cancelled or, unless WaitAtEOF,
	// when stdin closes.
	Work func(ctx context.Context, args json.RawMessage, status func(message string)) (string, error)
	// PollInterval is the pollInterval tasks carry, in milliseconds.
	PollInterval int

	// WaitAtEOF (a bug): when stdin closes, the server waits for the tasks
	// still running instead of stopping them, so a task outlives its
	// session and keeps the process alive.
	WaitAtEOF bool
	// ForgetCompleted (a bug): a completed task is dropped from the store
	// once tasks/get has reported it completed, so its tasks/result is
	// refused and its result lost.
	ForgetCompleted bool
	// CancelTerminal (a bug): tasks/cancel of a task already completed or
	// failed marks it cancelled, where it must be refused and the task
	// keep its status.
	CancelTerminal bool
	// EvictAfter (a bug when set): a task is forgotten this long after it
	// was created, whatever the ttl it was given says, so that tasks/get
	// and tasks/result of it are refused.
	EvictAfter time.Duration
	// CompleteOnError (a bug): a task whose work failed ends completed,
	// with the error as a tool error (isError), where it must end failed.
	CompleteOnError bool
	// Others (a bug when set): tasks of other requestors, by id, that
	// tasks/list shows this one, as a store shared between clients and
	// not bound to any does.
	Others []string

	srv     *Server
	ctx     context.Context
	stop    context.CancelFunc
	running sync.WaitGroup

	mu    sync.Mutex
	n     int
	tasks map[string]*task
	order []string
}

type task struct {
	id, status, message string
	created, updated    time.Time
	result              string
	err                 error
	cancel              context.CancelFunc
	done                chan struct{} // closed once terminal
}

const taskTTL = 60000

func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// Install declares tasks on s (list, cancel, tools/call) and handles their
// methods.
func (ts *Tasks) Install(s *Server) {
	ts.srv = s
	ts.ctx, ts.stop = context.WithCancel(context.Background())
	ts.tasks = map[string]*task{}
	if s.Capabilities == nil {
		s.Capabilities = map[string]any{}
	}
	s.Capabilities["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	if s.Methods == nil {
		s.Methods = map[string]Method{}
	}
	s.Methods["tools/call"] = ts.call
	s.Methods["tasks/get"] = ts.get
	s.Methods["tasks/result"] = ts.result
	s.Methods["tasks/list"] = ts.list
	s.Methods["tasks/cancel"] = ts.cancel
	atEOF := s.AtEOF
	s.AtEOF = func() {
		if atEOF != nil {
			atEOF()
		}
		if ts.WaitAtEOF {
			// BUG: the read loop waits for every task to end; nothing
			// will ever cancel them now.
			ts.running.Wait()
			return
		}
		ts.stop()
	}
}

func (ts *Tasks) state(t *task) map[string]any {
	m := map[string]any{
		"taskId": t.id, "status": t.status, "ttl": taskTTL, "pollInterval": ts.PollInterval,
		"createdAt": t.created.UTC().Format(time.RFC3339Nano), "lastUpdatedAt": t.updated.UTC().Format(time.RFC3339Nano),
	}
	if t.message != "" {
		m["statusMessage"] = t.message
	}
	return m
}

func taskID(params json.RawMessage) string {
	var p struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.TaskID
}

func (ts *Tasks) call(ctx context.Context, era Era, params json.RawMessage) (map[string]any, *Error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Task      json.RawMessage `json:"task"`
	}
	_ = json.Unmarshal(params, &p)
	if len(p.Task) == 0 || string(p.Task) == "null" {
		return nil, nil // a plain call: the tool's Run
	}
	wctx, cancel := context.WithCancel(ts.ctx)
	now := time.Now()
	ts.mu.Lock()
	ts.n++
	t := &task{id: fmt.Sprintf("task-%d", ts.n), status: "working", created: now, updated: now, cancel: cancel, done: make(chan struct{})}
	ts.tasks[t.id] = t
	ts.order = append(ts.order, t.id)
	created := ts.state(t)
	ts.mu.Unlock()
	ts.running.Add(1)
	go func() {
		defer ts.running.Done()
		text, err := ts.Work(wctx, p.Arguments, func(message string) { ts.update(t, "working", message, "", nil) })
		status := "completed"
		if err != nil && !ts.CompleteOnError {
			status = "failed"
		}
		// BUG (CompleteOnError): a failed tool call ends completed.
		ts.update(t, status, "", text, err)
	}()
	return map[string]any{"task": created}, nil
}

// update moves t to status, unless it is terminal already, and notifies the
// client.
func (ts *Tasks) update(t *task, status, message, result string, err error) {
	ts.mu.Lock()
	if terminal(t.status) {
		ts.mu.Unlock()
		return
	}
	t.status, t.message, t.updated = status, message, time.Now()
	if terminal(status) {
		t.result, t.err = result, err
		close(t.done)
	}
	st := ts.state(t)
	ts.mu.Unlock()
	_ = ts.srv.Notify("notifications/tasks/status", st)
}

func (ts *Tasks) lookup(params json.RawMessage) (*task, *Error) {
	id := taskID(params)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.tasks[id]
	if t != nil && ts.EvictAfter > 0 && time.Since(t.created) > ts.EvictAfter {
		// BUG (EvictAfter): evicted before its ttl ran out.
		delete(ts.tasks, id)
		t = nil
	}
	if t == nil {
		return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown task %q", id)}
	}
	return t, nil
}

func (ts *Tasks) get(ctx context.Context, era Era, params json.RawMessage) (map[string]any, *Error) {
	t, err := ts.lookup(params)
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	st := ts.state(t)
	if ts.ForgetCompleted && t.status == "completed" {
		// BUG: reported completed, so done with: the result goes too.
		delete(ts.tasks, t.id)
	}
	return st, nil
}

func (ts *Tasks) result(ctx context.Context, era Era, params json.RawMessage) (map[string]any, *Error) {
	t, err := ts.lookup(params)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, &Error{Code: -32603, Message: "the server is shutting down"}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	switch {
	case t.status == "cancelled":
		return nil, &Error{Code: -32603, Message: "the task was cancelled"}
	case t.err != nil:
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": t.err.Error()}}, "isError": true,
			"_meta": map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}}, nil
	}
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": t.result}},
		"_meta": map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}}, nil
}

func (ts *Tasks) list(ctx context.Context, era Era, params json.RawMessage) (map[string]any, *Error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	all := []any{}
	for _, id := range ts.Others {
		// BUG (Others): another requestor's task, shown to this one.
		all = append(all, map[string]any{"taskId": id, "status": "completed", "ttl": taskTTL,
			"createdAt": time.Unix(0, 0).UTC().Format(time.RFC3339Nano), "lastUpdatedAt": time.Unix(0, 0).UTC().Format(time.RFC3339Nano)})
	}
	for _, id := range ts.order {
		if t := ts.tasks[id]; t != nil {
			all = append(all, ts.state(t))
		}
	}
	return map[string]any{"tasks": all}, nil
}

func (ts *Tasks) cancel(ctx context.Context, era Era, params json.RawMessage) (map[string]any, *Error) {
	t, err := ts.lookup(params)
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	if terminal(t.status) && !ts.CancelTerminal {
		ts.mu.Unlock()
		return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("task %s is already %s", t.id, t.status)}
	}
	// BUG (CancelTerminal): a terminal task is overwritten.
	was := t.status
	t.status, t.message, t.updated = "cancelled", "", time.Now()
	if !terminal(was) {
		close(t.done)
	}
	st := ts.state(t)
	ts.mu.Unlock()
	t.cancel()
	_ = ts.srv.Notify("notifications/tasks/status", st)
	return st, nil
}

// Sleep waits d, or until ctx ends, whose error it then returns: a task's
// work step that a cancellation stops.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Steady is the work of most planted task servers: it reports status once,
// works for d (or until cancelled), and returns result. The bug of each
// lies in the store, not in the work.
func Steady(status, result string, d time.Duration) func(context.Context, json.RawMessage, func(string)) (string, error) {
	return func(ctx context.Context, _ json.RawMessage, report func(string)) (string, error) {
		report(status)
		return result, Sleep(ctx, d)
	}
}

// ServeTasks serves, on stdio, srv with echo and tool, which may only run as
// a task (execution.taskSupport "required") and whose work is ts.Work: the
// planted task servers differ only in the work and in ts's bugs. It logs
// what ended it.
func ServeTasks(srv *Server, ts *Tasks, tool, description string) {
	srv.StatefulOnly = true
	srv.Tools = append(srv.Tools, Echo(), Tool{Name: tool, Description: description, TaskSupport: "required"})
	ts.Install(srv)
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
