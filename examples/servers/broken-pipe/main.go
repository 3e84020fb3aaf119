// Command broken-pipe is an MCP server that dies of a panic when a write to
// its stdout fails because the client stopped reading (EPIPE).
//
// Bug classes 3 and 5 (writes after the peer closed). It mirrors what the
// official SDKs' stdio servers do when the client closes its end of their
// stdout: the TypeScript SDK's StdioServerTransport has no 'error' listener
// on stdout, so the EPIPE is an unhandled 'error' event that kills Node
// (typescript-sdk #1564; 1.32.2 still does it), and the Python SDK's
// stdout_writer task lets BrokenPipeError escape stdio_server()'s task group,
// which ends the process with a traceback (mcp 2.3.0 does it). Go's form of
// an exception nobody catches is a panic: "panic: write /dev/stdout: broken
// pipe", a goroutine dump and exit status 2.
//
// Exposed by mcpchaos's half-close-s2c scenario (mcpchaos closes its read
// end of the server's stdout during a call): the first answer written after
// that panics. The judge reports it as a crash warning,
// crash-after-half-close: the fault made the write fail, and exiting is fair
// with no way to answer, but not by an unhandled exception. A plain session
// never closes the server's stdout, so nothing fails.
//
// The fixed twin (--fixed) returns the write error: the server logs the
// broken pipe once, drops the answers it can no longer deliver, reads on,
// and exits 0 when its stdin closes.
package main

import (
	"flag"
	"io"
	"log"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "broken-pipe", Version: "1.0.0",
		Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
		WriteLine: func(out io.Writer, line []byte) error {
			_, err := out.Write(line)
			if err != nil && !*fixed {
				// BUG: a write error is taken for something that cannot
				// happen; a client that stops reading makes it happen.
				panic(err)
			}
			return err // FIX: rawmcp logs it once, and the server reads on.
		},
	}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
