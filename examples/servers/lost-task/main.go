// Command lost-task is an MCP server that loses a task's result: once
// tasks/get has told the client a task completed, the server drops the task,
// and the client's tasks/result, the only way to get the result, is refused.
//
// A task store that cleans up as soon as it has reported a task done, as a
// job queue deletes finished jobs, breaks the task's contract: a completed
// task's tasks/result MUST return its request's result (MCP 2025-11-25,
// Basic › Utilities › Tasks), for the ttl the task was given. The probe of
// mcpchaos test polls the task until it is completed, then asks for the
// result, as the specification's requestor does: the baseline finds it
// (task-result-lost), no fault needed.
//
// The fixed twin keeps a task, and its result, for its ttl.
package main

import (
	"flag"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()
	rawmcp.ServeTasks(&rawmcp.Server{Name: "lost-task", Version: "1.0.0"}, &rawmcp.Tasks{
		PollInterval: 100,
		// BUG: a task reported completed is dropped. FIX: kept for its ttl.
		ForgetCompleted: !*fixed,
		Work:            rawmcp.Steady("converting", "converted", 300*time.Millisecond),
	}, "convert", "Converts a document as a task.")
}
