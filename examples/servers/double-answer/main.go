// Command double-answer is an MCP server that asks the client for its roots
// during a tool call, and takes an answer to a request it is no longer
// waiting for as a broken invariant: it panics, and a second copy of the
// client's answer brings the whole server down.
//
// Bug class: request-id bookkeeping (JSON-RPC: a response whose id the
// receiver cannot match is ignored or logged, never fatal; see classes 7 and
// 8). The server keeps the requests it sent the client in a map by id, and
// deletes an entry when its answer arrives; a second answer under that id
// finds no entry. It mirrors the sessions that look the id up without asking
// whether it is there: a Python receive loop indexing its dict of response
// streams (KeyError), Go code dereferencing the missing entry of a map of
// pointers (nil pointer dereference) or closing a waiter's channel twice.
// Go's net/rpc client is the correct shape: its input loop takes the call
// out of its pending map and, when there is none, reads the answer and
// drops it.
//
// The roots tool sends roots/list, only when the client declared the roots
// capability at initialize, and answers the roots. In a plain session the
// client answers once, and the entry is there. Exposed by a duplicated answer
// (`duplicate:on=c2s:response:roots/list`, a fault no scenario of the
// default matrix holds): the buggy twin panics on the copy (crash, signature
// go:panic, exit 2).
//
// Server-to-client requests exist only in the stateful era, so this server
// answers server/discover with "method not found" and probing clients fall
// back to initialize, where the bug lives.
//
// The fixed twin (--fixed) logs an answer it is not waiting for and drops
// it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"sync"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	c := &client{}
	srv := &rawmcp.Server{
		Name: "double-answer", Version: "1.0.0",
		StatefulOnly: true,
		Tools:        []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow(), c.roots()},
		Methods:      map[string]rawmcp.Method{"initialize": c.initialize},
	}
	if !*fixed {
		// BUG: an answer is handed to the request pending under its id
		// without asking whether one is; the entry its first copy took
		// out is missing for the second.
		srv.OnStrayResponse = func(id json.RawMessage, _ rawmcp.Response) {
			panic(fmt.Sprintf("answer to request %s: no request pending under that id", id))
		}
	}
	// FIX: no OnStrayResponse hook; rawmcp logs the answer and drops it.

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// client is what the server knows of its client.
type client struct {
	mu       sync.Mutex
	hasRoots bool // the client declared the roots capability
}

// initialize notes the client's capabilities and leaves the answer to rawmcp.
func (c *client) initialize(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
	var p struct {
		Capabilities struct {
			Roots json.RawMessage `json:"roots"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(params, &p)
	c.mu.Lock()
	c.hasRoots = len(p.Capabilities.Roots) > 0 && string(p.Capabilities.Roots) != "null"
	c.mu.Unlock()
	return nil, nil
}

// roots asks the client for its roots, if it has any to give, and answers
// them.
func (c *client) roots() rawmcp.Tool {
	return rawmcp.Tool{
		Name:        "roots",
		Description: "Asks the client for its roots (roots/list), if it declared the roots capability, and answers them.",
		Run: func(ctx context.Context, call *rawmcp.Call) (string, error) {
			c.mu.Lock()
			declared := c.hasRoots
			c.mu.Unlock()
			if !declared {
				return "the client declared no roots capability: not asked", nil
			}
			roots, err := call.Request(ctx, "roots/list", nil)
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
