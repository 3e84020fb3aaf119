// Command lost-stream is an MCP client over streamable HTTP with one
// planted bug: it routes answers to waiting calls by id from the goroutine
// that reads each POST's answer, and when that answer ends without the
// call's result (a cut connection, a stream the server closed early) it
// fails nobody: the call waits for ever. SDK clients have shipped the same
// (a pending-request map nobody fails when the transport's stream ends).
// mcpchaos test-client --server-url finds it as a hang under
// result-stream-cut, and under server-error, session-expired and
// session-forgotten, whose error status ends the answer without the result
// too. With --fixed, a call whose answer ended without its result fails,
// and the program exits 1: failing a call that became impossible is fair
// (told 404, it starts no new session: a warning, not an error).
//
// Usage: lost-stream [--fixed] [URL]   (default URL: $MCPCHAOS_SERVER_URL)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/httpclients/internal/rawclient"
)

func main() {
	c, fixed := rawclient.Start("lost-stream", os.Args[1:])
	ctx := context.Background()
	defer c.Close()
	// slow first: its progress makes the server answer with an event
	// stream, which a cut ends after the head, without the result.
	calls := []struct{ tool, args string }{{"slow", `{"ms":200,"steps":2}`}, {"echo", `{"text":"hello"}`}}
	for i, call := range calls {
		id := i + 1
		answer := make(chan json.RawMessage, 1)
		go func() {
			a, err := c.Post(ctx, rawclient.Call(id, call.tool, call.args))
			if err != nil {
				answer <- json.RawMessage(fmt.Sprintf(`{"error":{"message":%q}}`, err.Error()))
				return
			}
			if m := rawclient.IDOf(a.Messages, fmt.Sprint(id)); m != nil {
				answer <- m
				return
			}
			if fixed {
				answer <- json.RawMessage(`{"error":{"message":"the answer ended without the result"}}`)
			}
			// The bug: the stream ended without the result, and the call
			// waiting for it is never told.
		}()
		select {
		case m := <-answer:
			var v struct {
				Error *struct{ Message string } `json:"error"`
			}
			if json.Unmarshal(m, &v) == nil && v.Error != nil {
				fmt.Fprintf(os.Stderr, "lost-stream: %s failed: %s\n", call.tool, v.Error.Message)
				os.Exit(1)
			}
			fmt.Printf("result %s\n", call.tool)
		case <-time.After(time.Hour):
			os.Exit(3)
		}
	}
}
