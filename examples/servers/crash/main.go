// Command crash is an MCP server that panics with "send on closed channel"
// when its stdin closes while calls are still running.
//
// Bug class 3 (the transport closes while handlers run; they answer into a
// closed stream). It mirrors python-sdk#2306 (issue #526): on stdin EOF the
// receive loop closed the write stream while a handler was still running, the
// handler's answer hit it, and server.run() died of ClosedResourceError in an
// ExceptionGroup. Go's closed stream is a closed channel, and its
// ClosedResourceError is a panic: exit status 2, "panic: send on closed
// channel" and a goroutine dump on stderr.
//
// Handlers put their lines on a channel that one goroutine writes to stdout.
// The read loop closes that channel the moment stdin reaches EOF. Exposed by
// mcpchaos's eof-inflight scenario (the server's stdin closes while three calls
// are in flight): the first call to finish panics. A plain session closes
// stdin only once every call is answered, so nothing is sent after the close.
//
// The fixed twin (--fixed) closes the channel after Serve returns, that is
// once every handler has answered (or been given up on; rawmcp refuses writes
// after Serve returns, so a late handler gets an error, not a panic).
package main

import (
	"flag"
	"io"
	"log"
	"os"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	lines := make(chan []byte, 64)
	written := make(chan struct{})
	go func() {
		defer close(written)
		for line := range lines {
			os.Stdout.Write(line)
		}
	}()

	srv := &rawmcp.Server{
		Name: "crash", Version: "1.0.0",
		Tools:     []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
		WriteLine: func(_ io.Writer, line []byte) error { lines <- line; return nil },
	}
	if !*fixed {
		// BUG: closes the channel while handlers may still send on it.
		srv.AtEOF = func() { close(lines) }
	}

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
	if *fixed {
		close(lines) // FIX: every handler has answered; nobody sends any more.
	}
	<-written
}
