// Command null-params is an MCP server that dies of a tools/call whose
// params are missing or null: its handler dereferences them unchecked, and
// the panic ends the process, with every call in flight.
//
// Bug class: input not validated, at the envelope (JSON-RPC 2.0 §5: a
// request it cannot use is answered -32602 Invalid params, or -32600
// Invalid Request). It mirrors the handlers that decode params into a
// pointer and use it: encoding/json leaves the pointer nil for null and for
// a missing member, and the first field access panics.
//
// A polite session always sends params. Exposed by the hostile-input
// scenario, which sends tools/call without them, with null, and with an
// array: crash, signature go:panic (exit 2).
//
// The fixed twin (--fixed) answers such a request -32602.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

type callParams struct {
	Name string `json:"name"`
}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{Name: "null-params", Version: "1.0.0", Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()}}
	srv.Methods = map[string]rawmcp.Method{"tools/call": func(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
		var p *callParams
		if err := json.Unmarshal(params, &p); err != nil || p == nil {
			if *fixed {
				return nil, &rawmcp.Error{Code: -32602, Message: "tools/call needs params: an object with the tool's name"}
			}
		}
		_ = p.Name      // BUG: p is nil for params null or missing
		return nil, nil // the built-in handling calls the tool
	}}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
