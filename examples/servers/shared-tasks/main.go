// Command shared-tasks is an MCP server whose tasks/list shows one client
// the tasks of another: its task store is shared between clients and not
// bound to any, so every requestor lists every task (here, another client's
// finished task).
//
// tasks/list lists the requestor's own tasks (MCP 2025-11-25, Basic ›
// Utilities › Tasks › Security: tasks are bound to the requestor's
// authorization context where there is one, and a server that cannot tell
// requestors apart SHOULD NOT declare tasks.list), or it hands out other
// clients' task ids, and with them their results. The probe of mcpchaos
// test lists the tasks it created: the baseline finds it (task-not-owned, a
// warning), no fault needed.
//
// The fixed twin lists only the session's own tasks.
package main

import (
	"flag"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()
	ts := &rawmcp.Tasks{
		PollInterval: 100,
		Work:         rawmcp.Steady("summarizing", "summarized", 300*time.Millisecond),
	}
	if !*fixed {
		ts.Others = []string{"another-client-task-7"} // BUG: not this client's
	}
	rawmcp.ServeTasks(&rawmcp.Server{Name: "shared-tasks", Version: "1.0.0"}, ts, "summarize", "Summarizes a document as a task.")
}
