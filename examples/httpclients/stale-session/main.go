// Command stale-session is an MCP client over streamable HTTP with one
// planted bug: when the server answers a request with HTTP 404 because the
// session ended, it retries the request under the same session id, for
// ever. The specification says a client that gets 404 for a request with
// an Mcp-Session-Id "MUST start a new session by sending a new
// InitializeRequest without a session ID attached" (2025-11-25,
// Transports: Session Management). mcpchaos test-client --server-url finds
// it under session-expired (the server ended the session) and
// session-forgotten (the server forgot it, as after a restart): the
// retries under the dead id (dead-session-reused), and a hang. With
// --fixed, it starts a new session and sends the request once more.
//
// Usage: stale-session [--fixed] [URL]   (default URL: $MCPCHAOS_SERVER_URL)
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/httpclients/internal/rawclient"
)

func main() {
	c, fixed := rawclient.Start("stale-session", os.Args[1:])
	ctx := context.Background()
	defer c.Close()
	for i, tool := range []string{"echo", "echo"} {
		id := i + 1
		renewed := false
		for {
			a, err := c.Post(ctx, rawclient.Call(id, tool, `{"text":"hello"}`))
			if err != nil {
				fmt.Fprintf(os.Stderr, "stale-session: %s failed: %v\n", tool, err)
				os.Exit(1)
			}
			if a.Status == http.StatusNotFound {
				if !fixed {
					// The bug: the session is gone, and the same session id
					// is sent again and again.
					time.Sleep(100 * time.Millisecond)
					continue
				}
				if renewed {
					fmt.Fprintln(os.Stderr, "stale-session: 404 again in a new session")
					os.Exit(1)
				}
				renewed = true
				if err := c.Initialize(ctx); err != nil {
					fmt.Fprintln(os.Stderr, "stale-session: starting a new session:", err)
					os.Exit(1)
				}
				continue
			}
			if rawclient.IDOf(a.Messages, fmt.Sprint(id)) == nil {
				fmt.Fprintf(os.Stderr, "stale-session: %s: HTTP %d without its result\n", tool, a.Status)
				os.Exit(1)
			}
			fmt.Printf("result %s\n", tool)
			break
		}
	}
}
