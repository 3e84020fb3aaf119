// Command zombie is an MCP server that never exits when its stdin closes while
// a tool waits for the client's answer to a server-to-client request.
//
// Bug classes 4 and 5 (handlers blocked on a server-to-client request when the
// transport closes; a server that never exits after stdin closes). It mirrors
// python-sdk#2306 (issue #526): on stdin EOF server.run()'s task group joined
// on handlers instead of cancelling them, so a handler waiting on roots/list,
// sampling or elicitation, whose answer could no longer arrive, kept the
// server alive for ever.
//
// The roots tool sends roots/list and waits for the answer with no timeout. On
// stdin EOF the server waits for every running call before it exits, and its
// roots/list stays pending although no answer can come any more. Exposed by
// mcpchaos's eof-server-request scenario (the server's stdin closes right
// after the server sends a server-to-client request): the server never exits.
// In a plain session the client answers roots/list and the call ends.
//
// Server-to-client requests exist only in the stateful era, so this server
// answers server/discover with "method not found" and probing clients fall
// back to initialize, where the bug lives.
//
// The fixed twin (--fixed) fails pending server-to-client requests at once
// when stdin closes: the roots call answers with a tool error and the server
// exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "zombie", Version: "1.0.0",
		StatefulOnly: true,
		Tools:        []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow(), roots()},
		// Both twins: exit only once every running call has answered.
		HandlerWait: rawmcp.Forever,
		// BUG: requests to the client stay pending after stdin closed.
		// FIX: they fail at once with rawmcp.ErrClosed.
		KeepPendingAtEOF: !*fixed,
	}

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// roots asks the client for its roots and answers them.
func roots() rawmcp.Tool {
	return rawmcp.Tool{
		Name:        "roots",
		Description: "Asks the client for its roots (roots/list) and answers them.",
		Run: func(ctx context.Context, c *rawmcp.Call) (string, error) {
			roots, err := c.Request(ctx, "roots/list", nil) // no timeout: the user may be slow
			switch {
			case errors.Is(err, rawmcp.ErrStateless):
				return "no roots in this era", nil
			case err != nil:
				return "", fmt.Errorf("roots/list: %w", err)
			}
			return string(roots), nil
		},
	}
}
