// Command lost-response is an MCP server that exits the moment its stdin
// closes, so the calls still running then are never answered.
//
// Bug class 5 (responses dropped on EOF). It mirrors the stdio servers that
// treat stdin's end as "exit now" (process.exit on the stream's 'end' event,
// os.Exit in a read loop), and the SDK transports that tear down the write
// side as the read side ends: the MCP stdio shutdown closes stdin first and
// expects the answers already owed to arrive before the process goes.
//
// Exposed by mcpchaos's eof-inflight scenario (the server's stdin closes while
// three calls are in flight): the server exits 0 at once and the three
// answers are lost. A plain session closes stdin only once every call is
// answered, so there is nothing to lose.
//
// The fixed twin (--fixed) lets rawmcp do what it does by default: wait (up to
// two seconds) for the running calls, write their answers, then exit 0.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "lost-response", Version: "1.0.0",
		Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
	}
	if !*fixed {
		// BUG: stdin closed, so exit, although calls are still running.
		srv.AtEOF = func() { os.Exit(0) }
	}
	// FIX: no AtEOF; Serve waits for the running calls and writes their answers.

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
