// Command unvalidated-input is an MCP server whose add tool runs on
// arguments its own inputSchema refuses: a missing or mistyped number is
// taken for 0, and the call answered as a success.
//
// Bug class: input not validated (MCP 2025-11-25, Server › Tools ›
// Security Considerations: "Servers MUST: Validate all tool inputs"). It
// mirrors the handlers that read their arguments out of a map with a type
// assertion whose failure they ignore (args["a"].(float64) with the ok
// dropped, mcp-go's GetFloat with a default): a model that forgets an
// argument, or sends "two" for 2, gets a confident wrong answer instead of
// an error it could correct.
//
// A polite session calls add with arguments generated from the schema, and
// is answered right. The baseline finds it all the same: of the requests the
// probe sends to be refused, one calls add with {} where a and b are
// required, and it is answered 0 (the judge's input-not-validated warning,
// with the schema's complaint); the hostile-input scenario calls it with
// each argument missing, null and of the wrong type.
//
// The fixed twin (--fixed) decodes the arguments strictly and answers what
// it cannot use with a tool error (isError), as MCP asks.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	add := rawmcp.Tool{
		Name:        "add",
		Description: "Adds two integers.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"a": map[string]any{"type": "integer"},
				"b": map[string]any{"type": "integer"},
			},
			"required": []any{"a", "b"},
		},
		Run: func(_ context.Context, c *rawmcp.Call) (string, error) {
			if *fixed {
				return addStrict(c.Arguments)
			}
			return addLax(c.Arguments), nil
		},
	}
	srv := &rawmcp.Server{Name: "unvalidated-input", Version: "1.0.0", Tools: []rawmcp.Tool{rawmcp.Echo(), add}}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// addLax is the bug: what is not a number counts as 0.
func addLax(raw json.RawMessage) string {
	var args map[string]any
	_ = json.Unmarshal(raw, &args)
	a, _ := args["a"].(float64) // BUG: the ok is dropped
	b, _ := args["b"].(float64)
	return fmt.Sprint(int64(a) + int64(b))
}

// addStrict is the fix: both arguments, both integers, or a tool error.
func addStrict(raw json.RawMessage) (string, error) {
	var args struct {
		A, B *int64
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", fmt.Errorf("a and b must be integers: %v", err)
	}
	if args.A == nil || args.B == nil {
		return "", errors.New("a and b are required")
	}
	return fmt.Sprint(*args.A + *args.B), nil
}
