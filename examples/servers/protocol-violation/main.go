// Command protocol-violation is an MCP server that prints a plain-text warning
// on stdout, the JSON-RPC channel, when its notification backlog grows.
//
// Bug class 6 (a line on stdout that is not JSON-RPC). Logging to stdout is the
// most common stdio MCP server bug there is: a print(), console.log or
// fmt.Println left in, or a logger that defaults to stdout. The client's
// framer reads "warning: notification backlog 11" as a message, fails to parse
// it, and depending on the SDK drops it, errors, or ends the session.
//
// Client notifications go on a queue that a worker drains once they stop
// arriving for 100ms (a burst of roots/list_changed is one refresh, not a
// hundred); when more than 10 are queued the server warns. Exposed by
// mcpchaos's burst-c2s scenario (100 notifications/roots/list_changed right
// after a tools/call is forwarded). A plain session queues none.
//
// The fixed twin (--fixed) writes the warning to stderr, where MCP says logs go.
package main

import (
	"flag"
	"log"
	"os"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	warnings := log.New(os.Stdout, "", 0) // BUG: stdout carries JSON-RPC only
	if *fixed {
		warnings = log.New(os.Stderr, "", 0) // FIX: logs go to stderr
	}

	q := &backlog{warn: warnings, limit: 10, quiet: 100 * time.Millisecond}
	srv := &rawmcp.Server{
		Name: "protocol-violation", Version: "1.0.0",
		Tools:          []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
		OnNotification: q.add,
	}

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// backlog queues client notifications and processes them in one batch once
// they stop arriving for quiet.
type backlog struct {
	warn  *log.Logger
	limit int
	quiet time.Duration

	mu    sync.Mutex
	queue []rawmcp.Notification
	timer *time.Timer
}

// add runs on the server's read loop.
func (b *backlog) add(n rawmcp.Notification) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, n)
	if len(b.queue) == b.limit+1 {
		b.warn.Printf("warning: notification backlog %d", len(b.queue))
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(b.quiet, b.process)
	} else {
		b.timer.Reset(b.quiet)
	}
}

func (b *backlog) process() {
	b.mu.Lock()
	batch := b.queue
	b.queue = nil
	b.mu.Unlock()
	if len(batch) > 0 {
		log.Printf("processed %d notifications (%s ...)", len(batch), batch[0].Method)
	}
}
