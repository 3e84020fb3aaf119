// Command stray-update is an MCP server that tells its client about changes
// to resources the client never subscribed to: a change notifies every
// resource it touched, subscribed or not.
//
// notifications/resources/updated is for the resources a client subscribed
// to (the schema's ResourceUpdatedNotification: "This should only be sent if
// the client previously sent a resources/subscribe request"); a server that
// broadcasts every change makes each client read what it did not ask to
// follow. The probe of mcpchaos test subscribes to the first resource it
// could read and calls every tool: the baseline finds it
// (update-not-subscribed, a warning), no fault needed.
//
// The fixed twin notifies only the subscribed resources.
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

var docs = []string{"doc://readme", "doc://changelog"}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	var mu sync.Mutex
	subscribed := map[string]bool{}
	srv := &rawmcp.Server{Name: "stray-update", Version: "1.0.0", StatefulOnly: true,
		Capabilities: map[string]any{"resources": map[string]any{"subscribe": true}}}
	uriOf := func(params json.RawMessage) string {
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(params, &p)
		return p.URI
	}
	srv.Methods = map[string]rawmcp.Method{
		"resources/list": func(context.Context, rawmcp.Era, json.RawMessage) (map[string]any, *rawmcp.Error) {
			var list []any
			for _, d := range docs {
				list = append(list, map[string]any{"uri": d, "name": d[len("doc://"):], "mimeType": "text/plain"})
			}
			return map[string]any{"resources": list}, nil
		},
		"resources/templates/list": func(context.Context, rawmcp.Era, json.RawMessage) (map[string]any, *rawmcp.Error) {
			return map[string]any{"resourceTemplates": []any{}}, nil
		},
		"resources/read": func(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
			uri := uriOf(params)
			if !slices.Contains(docs, uri) {
				return nil, &rawmcp.Error{Code: -32002, Message: "resource not found"}
			}
			return map[string]any{"contents": []any{map[string]any{"uri": uri, "mimeType": "text/plain", "text": "v1"}}}, nil
		},
		"resources/subscribe": func(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
			mu.Lock()
			subscribed[uriOf(params)] = true
			mu.Unlock()
			return map[string]any{}, nil
		},
		"resources/unsubscribe": func(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
			mu.Lock()
			delete(subscribed, uriOf(params))
			mu.Unlock()
			return map[string]any{}, nil
		},
	}
	srv.Tools = []rawmcp.Tool{rawmcp.Echo(), {
		Name:        "publish",
		Description: "Publishes a new version of every document.",
		Run: func(context.Context, *rawmcp.Call) (string, error) {
			for _, d := range docs {
				mu.Lock()
				on := subscribed[d]
				mu.Unlock()
				if !on && *fixed {
					continue // FIX: only what the client follows
				}
				// BUG: every changed document, followed or not.
				_ = srv.Notify("notifications/resources/updated", map[string]any{"uri": d})
			}
			return "published", nil
		},
	}}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}
