// Command looping-cursor is an MCP server whose prompt listing never ends:
// its last page hands out the cursor that led to it, so a client following
// nextCursor, as the specification's pagination describes, lists the same
// page for ever.
//
// Cursors are the server's to make stable (MCP 2025-11-25, Server ›
// Utilities › Pagination); an off-by-one in the page arithmetic, here a
// "next page" computed without checking for the end, turns the listing into
// a loop. The probe of mcpchaos test follows every listing and stops at a
// cursor handed out twice: the baseline finds it (list-cursor-repeats, a
// warning), no fault needed.
//
// The fixed twin gives the last page no nextCursor.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"strconv"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

// prompts are listed two to a page.
var prompts = []string{"summarize", "translate", "review"}

const pageSize = 2

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{Name: "looping-cursor", Version: "1.0.0", StatefulOnly: true,
		Capabilities: map[string]any{"prompts": map[string]any{}}}
	srv.Methods = map[string]rawmcp.Method{
		"prompts/list": func(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
			var p struct {
				Cursor string `json:"cursor"`
			}
			_ = json.Unmarshal(params, &p)
			page := 0
			if p.Cursor != "" {
				n, err := strconv.Atoi(p.Cursor)
				if err != nil || n < 0 || n*pageSize >= len(prompts) {
					return nil, &rawmcp.Error{Code: rawmcp.CodeInvalidParams, Message: "invalid cursor"}
				}
				page = n
			}
			end := min((page+1)*pageSize, len(prompts))
			var list []any
			for _, name := range prompts[page*pageSize : end] {
				list = append(list, map[string]any{"name": name})
			}
			result := map[string]any{"prompts": list}
			next := page + 1
			if next*pageSize >= len(prompts) {
				if *fixed {
					return result, nil // FIX: the last page ends the listing
				}
				next = page // BUG: clamped to the last page, which links to itself
			}
			result["nextCursor"] = strconv.Itoa(next)
			return result, nil
		},
		"prompts/get": func(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
			var p struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(params, &p)
			return map[string]any{"messages": []any{map[string]any{"role": "user",
				"content": map[string]any{"type": "text", "text": fmt.Sprintf("Please %s this.", p.Name)}}}}, nil
		},
	}
	srv.Tools = []rawmcp.Tool{rawmcp.Echo()}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
