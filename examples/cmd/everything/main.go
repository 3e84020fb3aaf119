// Command everything serves the mcpchaos example server over stdio. It exits 0
// when stdin closes and on SIGTERM or interrupt.
//
//	go run ./examples/cmd/everything
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/everything"
)

// shutdownGrace bounds the wait for in-flight calls after a signal. mcp-go's
// Listen waits for its workers, and a worker blocked writing to a stdout that
// nobody reads any more would otherwise keep the process alive.
const shutdownGrace = time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	done := make(chan error, 1)
	go func() { done <- everything.ServeStdio(ctx, os.Stdin, os.Stdout) }()

	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		select {
		case err = <-done:
		case <-time.After(shutdownGrace):
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "everything: %v\n", err)
		os.Exit(1)
	}
}
