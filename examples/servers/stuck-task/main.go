// Command stuck-task is an MCP server whose task never finishes: its work
// waits on a lock its own status update holds, so the task stays working,
// unchanged, for as long as anyone polls it.
//
// A task is a request answered later; one that never reaches a terminal
// status is a request never answered, and its requestor polls it for ever
// (MCP 2025-11-25, Basic › Utilities › Tasks: requestors SHOULD poll until a
// terminal status). The probe of mcpchaos test polls it until it has stayed
// unchanged past --deadline: the baseline finds it (task-never-finished), no
// fault needed.
//
// The fixed twin releases the lock before it waits.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	var index sync.Mutex
	rawmcp.ServeTasks(&rawmcp.Server{Name: "stuck-task", Version: "1.0.0"}, &rawmcp.Tasks{
		PollInterval: 100,
		Work: func(ctx context.Context, _ json.RawMessage, status func(string)) (string, error) {
			index.Lock()
			status("indexing")
			if *fixed {
				// FIX: the lock guards the status update only.
				index.Unlock()
			}
			done := make(chan struct{})
			go func() {
				// BUG: the flush takes the lock the work still holds.
				index.Lock()
				index.Unlock()
				close(done)
			}()
			select {
			case <-done:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			return "indexed", rawmcp.Sleep(ctx, 200*time.Millisecond)
		},
	}, "reindex", "Rebuilds the index as a task.")
}
