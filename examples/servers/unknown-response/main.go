// Command unknown-response is an MCP server that answers notifications it does
// not know with a JSON-RPC error, a response to a request nobody sent.
//
// Judged as unknown-response: a response for an id never requested (here id
// null). It mirrors a common bug of hand-written JSON-RPC dispatchers: the
// "method not found" branch runs for every message, notifications included,
// although JSON-RPC forbids answering a notification and MCP clients are
// entitled to treat an unsolicited response as a protocol error.
//
// notifications/initialized and notifications/cancelled are recognised, so a
// plain session draws no such error. Exposed by mcpchaos's burst-c2s scenario
// (100 notifications/roots/list_changed right after a tools/call is
// forwarded): each draws
// {"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}.
//
// The fixed twin (--fixed) ignores notifications it does not know, as MCP
// requires.
package main

import (
	"flag"
	"log"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "unknown-response", Version: "1.0.0",
		Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
	}
	if !*fixed {
		// BUG: answers a notification as if it were a request.
		srv.OnNotification = func(rawmcp.Notification) {
			_ = srv.ReplyError(nil, rawmcp.CodeMethodNotFound, "Method not found")
		}
	}
	// FIX: no OnNotification; unknown notifications are ignored.

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
