package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpchaos/mcpchaos/examples/everything"
)

// runServe serves the bundled example MCP server on stdin and stdout; it is
// the default target of mcpchaos test.
func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		io.WriteString(stdout, "Usage: mcpchaos serve\n\nServes the bundled example MCP server (echo, slow with progress, list_changed,\nroots, sample, elicit, ping_client, big) over stdio, in both protocol eras.\n")
		return exitOK
	}
	if len(args) > 0 {
		return usageError(stderr, "serve takes no arguments yet")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := everything.ServeStdio(ctx, stdin, stdout); err != nil && !errors.Is(err, context.Canceled) {
		return usageError(stderr, "serve: %v", err)
	}
	if ctx.Err() != nil {
		// mcp-go leaves a reader blocked on stdin after a signal; exit now.
		os.Exit(exitOK)
	}
	return exitOK
}
