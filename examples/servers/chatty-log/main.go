// Command chatty-log is an MCP server that ignores the log level its client
// sets: after logging/setLevel "info" it still sends debug messages.
//
// The client sets a level to get less (MCP 2025-11-25, Server › Utilities ›
// Logging; the schema's SetLevelRequest: "the server should send all logs at
// this level and higher"); a server that stores the level and forgets to
// consult it floods a client that asked for quiet. The probe of mcpchaos test
// sets "info" and calls every tool: the baseline finds it (log-below-level,
// a warning), no fault needed.
//
// The fixed twin drops the messages below the level set.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"slices"
	"sync"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

var levels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	var mu sync.Mutex
	minimum := 0
	srv := &rawmcp.Server{Name: "chatty-log", Version: "1.0.0", StatefulOnly: true,
		Capabilities: map[string]any{"logging": map[string]any{}}}
	logf := func(level, text string) {
		mu.Lock()
		below := slices.Index(levels, level) < minimum
		mu.Unlock()
		if below && *fixed {
			return // FIX: below the level the client set
		}
		// BUG: the level is stored, never consulted.
		_ = srv.Notify("notifications/message", map[string]any{"level": level, "logger": "sync", "data": text})
	}
	srv.Methods = map[string]rawmcp.Method{
		"logging/setLevel": func(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
			var p struct {
				Level string `json:"level"`
			}
			_ = json.Unmarshal(params, &p)
			i := slices.Index(levels, p.Level)
			if i < 0 {
				return nil, &rawmcp.Error{Code: rawmcp.CodeInvalidParams, Message: "unknown level " + p.Level}
			}
			mu.Lock()
			minimum = i
			mu.Unlock()
			return map[string]any{}, nil
		},
	}
	srv.Tools = []rawmcp.Tool{rawmcp.Echo(), {
		Name:        "sync",
		Description: "Synchronises the catalogue, logging as it goes.",
		Run: func(context.Context, *rawmcp.Call) (string, error) {
			logf("debug", "opening the catalogue")
			logf("info", "12 items synchronised")
			logf("warning", "1 item skipped")
			return "synchronised", nil
		},
	}}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
