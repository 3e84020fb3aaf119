// Command listed-not-found is an MCP server whose tools/list names a tool
// its tools/call does not know: it lists get-forecast, but registered the
// handler under get_forecast, the spelling of the Go function, and looks the
// name up as the client sends it, so the call is answered "Unknown tool:
// get-forecast".
//
// Bug class: data and schema (the list and the dispatch disagree). It
// mirrors the servers that list a display name and dispatch on another
// (a prefix a gateway adds, a case or separator normalised on one side
// only), and the resource lists that outlive what they name. A client can
// only call what the list gives it, so every client that uses the tool
// fails.
//
// The baseline finds it: the probe calls every listed tool. Finding:
// protocol-violation (warning), rule listed-not-found.
//
// The fixed twin (--fixed) spells the name the way it registered it before
// the lookup.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"strings"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	forecast := rawmcp.Tool{
		Name:        "get-forecast",
		Description: "Tomorrow's weather.",
		Run: func(context.Context, *rawmcp.Call) (string, error) {
			return "sunny, 21C", nil
		},
	}
	registered := map[string]bool{"echo": true, "slow": true, "get_forecast": true}
	srv := &rawmcp.Server{Name: "listed-not-found", Version: "1.0.0", Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow(), forecast}}
	srv.Methods = map[string]rawmcp.Method{"tools/call": func(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
		var p struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, nil // the built-in handling refuses it
		}
		key := p.Name // BUG: registered as get_forecast, listed as get-forecast
		if *fixed {
			key = strings.ReplaceAll(p.Name, "-", "_")
		}
		if !registered[key] {
			return nil, &rawmcp.Error{Code: -32602, Message: "Unknown tool: " + p.Name}
		}
		return nil, nil
	}}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
