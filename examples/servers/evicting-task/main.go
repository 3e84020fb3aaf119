// Command evicting-task is an MCP server that forgets its tasks early: its
// store evicts a task 150 ms after creating it, as a cache sized for quick
// jobs does, whatever the ttl it told the client (60 s).
//
// A task's ttl is the time from its creation before it may be deleted (MCP
// 2025-11-25, Basic › Utilities › Tasks); a requestor polling within it is
// refused a task the server handed out, and loses its result. The probe of
// mcpchaos test polls at the task's pollInterval (100 ms): the baseline
// finds it (task-forgotten), no fault needed.
//
// The fixed twin keeps a task for its ttl.
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
		Work:         rawmcp.Steady("exporting", "exported", 400*time.Millisecond),
	}
	if !*fixed {
		ts.EvictAfter = 150 * time.Millisecond // BUG: shorter than the ttl
	}
	rawmcp.ServeTasks(&rawmcp.Server{Name: "evicting-task", Version: "1.0.0"}, ts, "export", "Exports the data as a task.")
}
