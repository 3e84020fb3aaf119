// Command mcpgotask is a tool run as a task, on mcp-go (the release go.mod
// pins) as its documentation shows it: AddTool with
// WithTaskSupport(TaskSupportOptional) on a server that declares
// WithTaskCapabilities, served on stdio. go test ./proof -run TestMCPGoTask
// keeps what mcpchaos finds in it (mark3labs/mcp-go #897: the task's work
// runs under the context of the request that created it, cancelled once the
// CreateTaskResult is sent, so every task ends cancelled with nobody asking).
package main

import (
	"context"
	"log"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("mcpgo-task", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithTaskCapabilities(true, true, true),
	)
	s.AddTool(mcp.NewTool("analyze",
		mcp.WithDescription("Analyzes data; may run as a task."),
		mcp.WithTaskSupport(mcp.TaskSupportOptional),
		mcp.WithString("data", mcp.Description("What to analyze.")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		return mcp.NewToolResultText("analyzed " + req.GetString("data", "nothing")), nil
	})
	if err := server.ServeStdio(s); err != nil {
		log.Fatal(err)
	}
}
