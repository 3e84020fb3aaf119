//go:build unix

package chaos

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpchaos/mcpchaos/examples/everything"
)

// runMCPServer is a real mcp-go stdio server, the bundled example one.
func runMCPServer() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := everything.ServeStdio(ctx, os.Stdin, os.Stdout); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "mcp-server:", err)
		return 1
	}
	return 0
}
