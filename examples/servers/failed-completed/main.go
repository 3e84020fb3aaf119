// Command failed-completed is an MCP server that reports a failed tool call's
// task as completed: the work fails (its quota is spent), and the task ends
// completed with the error as a tool error (isError).
//
// For a task wrapping a tool call, a result with isError ends it failed
// (MCP 2025-11-25, Basic › Utilities › Tasks › Error Handling: "the task
// should reach failed status"); a requestor that trusts the status takes a
// failure for a success. The probe of mcpchaos test polls the task to its
// end and asks for its result: the baseline finds it
// (task-completed-with-error, a warning), no fault needed.
//
// The fixed twin ends the task failed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()
	rawmcp.ServeTasks(&rawmcp.Server{Name: "failed-completed", Version: "1.0.0"}, &rawmcp.Tasks{
		PollInterval: 100,
		// BUG: a failed call's task ends completed. FIX: failed.
		CompleteOnError: !*fixed,
		Work: func(context.Context, json.RawMessage, func(string)) (string, error) {
			return "", errors.New("quota exceeded: try again tomorrow")
		},
	}, "translate", "Translates a document as a task.")
}
