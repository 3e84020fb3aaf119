// Command task-zombie is an MCP server whose task outlives its session: when
// its stdin closes while it runs a task, it waits for the task, and the task
// waits for an answer from a client that is gone, so the server never exits.
//
// Bug classes 3 and 5 (the transport closes while handlers run; a server that
// never exits after stdin closes), in a task's work rather than a request's
// handler (issue 29). The research tool runs as a task: it works, asks the
// client's model for a summary (sampling/createMessage, as server-everything's
// research task asks the user through an elicitation) and finishes. At stdin
// EOF the server waits for its running tasks, and the sampling request stays
// pending although no answer can come any more. Exposed by mcpchaos's
// eof-task scenario (the server's stdin closes while the client polls the
// task): the server never exits, a zombie. In a plain session the client
// answers the sampling request and the task completes.
//
// Tasks and server-to-client requests are the stateful era's, so this server
// answers server/discover with "method not found".
//
// The fixed twin stops its tasks when stdin closes: the pending request
// fails, the task ends and the server exits.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "task-zombie", Version: "1.0.0",
		// BUG: requests to the client stay pending after stdin closed.
		KeepPendingAtEOF: !*fixed,
	}
	rawmcp.ServeTasks(srv, &rawmcp.Tasks{
		PollInterval: 100,
		// BUG: at stdin EOF, wait for the tasks. FIX: stop them.
		WaitAtEOF: !*fixed,
		Work: func(ctx context.Context, _ json.RawMessage, status func(string)) (string, error) {
			status("gathering sources")
			if err := rawmcp.Sleep(ctx, 300*time.Millisecond); err != nil {
				return "", err
			}
			status("asking the model for a summary")
			summary, err := srv.Request(ctx, "sampling/createMessage", map[string]any{
				"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Summarize the sources."}}},
				"maxTokens": 100,
			})
			if err != nil {
				return "", fmt.Errorf("sampling: %w", err)
			}
			return "research done: " + string(summary), nil
		},
	}, "research", "Researches a topic as a task: works, asks the client's model for a summary, answers it.")
}
