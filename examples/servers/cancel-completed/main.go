// Command cancel-completed is an MCP server that lets a cancellation undo a
// task's completion: a tasks/cancel that arrives once a task has completed
// marks it cancelled, where the server must refuse it (-32602) and the task
// keep its status.
//
// Bug class 7 (a cancellation racing the response), for tasks: completed,
// failed and cancelled are terminal, and a task MUST NOT move out of them
// (MCP 2025-11-25, Basic › Utilities › Tasks). A requestor that has seen the
// task completed and then finds it cancelled cannot tell what happened to
// its work. Exposed by the cancel-task-race scenario (tasks/cancel sent as
// the server reports the task completed): the client's next tasks/get says
// cancelled (task-left-terminal). In a plain session the only cancellation
// is of a task still working, which is fair.
//
// The fixed twin refuses to cancel a terminal task.
package main

import (
	"flag"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()
	rawmcp.ServeTasks(&rawmcp.Server{Name: "cancel-completed", Version: "1.0.0"}, &rawmcp.Tasks{
		PollInterval: 100,
		// BUG: tasks/cancel overwrites a terminal status. FIX: -32602.
		CancelTerminal: !*fixed,
		Work:           rawmcp.Steady("rendering", "rendered", 300*time.Millisecond),
	}, "render", "Renders a report as a task.")
}
