package faults

import (
	"encoding/json"
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

// cancelTask sends the server tasks/cancel for the task a message names, as
// the task's requestor would (MCP 2025-11-25, Basic › Utilities › Tasks ›
// Cancelling Tasks). Fired on the status notification that says a task
// completed, it is the race of a cancellation with the task's completion:
// the server must refuse to cancel a terminal task (-32602) and keep it
// completed, or, if the cancellation won, keep it cancelled, and never
// report it in another status afterwards. The relay swallows the answer,
// and the judge holds the server to giving one.
var cancelTaskFamily = &Family{
	Name:  "cancel-task",
	Doc:   "send tasks/cancel toward the server for the task the triggering message names (params.taskId, result.taskId or result.task.taskId; default on=s2c:notification:notifications/tasks/status: a status the server reports); with status=completed only a message reporting that status fires it, the others are skipped; the relay swallows the answer and the judge holds the server to giving one",
	Phase: After,
	On:    "s2c:notification:notifications/tasks/status",
	Params: []Param{
		{Name: "status", Type: TypeChoice, Choices: []string{"any", "working", "input_required", "completed", "failed", "cancelled"}, Default: "any",
			Doc: "fire only on a message that reports the task in this status (any: whatever it reports)"},
	},
	New: func(v Values) (Action, error) {
		return cancelTask{status: v.String("status")}, nil
	},
	Example: "cancel-task:status=completed,times=0",
}

type cancelTask struct{ status string }

func (k cancelTask) Fire(c *FireContext) Effect {
	id, status := taskOf(c.Message.Raw)
	switch {
	case id == "":
		return Effect{Skipped: true, Detail: "skipped: the message names no task"}
	case k.status != "any" && status != k.status:
		return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: task %s is %s, not %s", id, orNone(status), k.status)}
	}
	taskID, _ := json.Marshal(id)
	rid := c.InjectID()
	return Effect{
		Inject: []Injection{{Dir: wire.ToServer, Raw: injectedRequest(rid, "tasks/cancel", `{"taskId":`+string(taskID)+`}`)}},
		Detail: fmt.Sprintf("inject tasks/cancel of task %s (id %s) toward the server", id, rid),
	}
}

func orNone(status string) string {
	if status == "" {
		return "in no status"
	}
	return status
}

// taskOf reads the task a message names and the status it gives it: a
// status notification's params, a tasks/get or tasks/cancel result, or a
// CreateTaskResult's task.
func taskOf(raw []byte) (id, status string) {
	var m struct {
		Params *taskState `json:"params"`
		Result *struct {
			taskState
			Task *taskState `json:"task"`
		} `json:"result"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return "", ""
	}
	switch {
	case m.Params != nil && m.Params.TaskID != "":
		return m.Params.TaskID, m.Params.Status
	case m.Result != nil && m.Result.Task != nil:
		return m.Result.Task.TaskID, m.Result.Task.Status
	case m.Result != nil:
		return m.Result.TaskID, m.Result.Status
	}
	return "", ""
}

type taskState struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
}
