// Command dies-on-discover is an MCP server of the stateful era that dies of
// the first request it does not know, and so of server/discover, the
// request a client of the 2026-07-28 revision opens every session with.
//
// Bug class: the session lifecycle (JSON-RPC 2.0 §5.1: a method the server
// does not have is answered -32601 Method not found, and MCP's stateless
// revision relies on it: a client falls back to initialize on that error).
// It mirrors FastMCP of the Python SDK 1.6.0 (and 1.3.0), whose request
// model is a closed union: server/discover fails its validation, and the
// ValidationError escapes the stdio session's receive loop and ends the
// process. Every client of the new revision then fails to connect, and its
// user sees a server that "does not start".
//
// mcpchaos finds it without faults: the baseline of the default era sends
// server/discover first, and the server dies (crash, signature go:panic,
// and server/discover lost); the matrix then runs in the stateful era,
// where the probe's request of a method no revision defines kills it again.
//
// The fixed twin (--fixed) answers a method it does not know with -32601,
// as rawmcp does.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"slices"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

// known are the methods this server serves.
var known = []string{"initialize", "ping", "tools/list", "tools/call"}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "dies-on-discover", Version: "1.0.0",
		StatefulOnly: true,
		Tools:        []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
	}
	if !*fixed {
		srv.OnRequest = func(_ json.RawMessage, method string) bool {
			if !slices.Contains(known, method) {
				// BUG: a request it has no model for is fatal.
				panic(fmt.Sprintf("validation error: unknown request method %q", method))
			}
			return true
		}
	}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
