// Command backtracking-template is an MCP server that matches the URIs a
// client reads against its resource template users://list{/ids*} the way a
// backtracking regular expression engine runs ([^/]+(?:,[^/]+)*)$: the
// first item may swallow commas the list's separator could have taken, so
// a near miss (a list of ids ending in a "/" the template has no room for)
// is refused only after every split of the list has been tried, twice the
// work for each id more.
//
// Bug class: cost that grows with the input (CVE-2026-0621: the TypeScript
// SDK's UriTemplate before 1.25.2 built that very pattern for exploded
// variables, and one resources/read of a few hundred bytes held a server's
// event loop for minutes). A polite client reads the template's expansion,
// which matches at once.
//
// The baseline finds it: the probe's growth series reads near misses of the
// template with 4, 8, 12... ids, and the answer time doubles with each id.
// Finding: hang (warning), rule cost-grows-with-input.
//
// The fixed twin (--fixed) matches ([^/,]+(?:,[^/,]+)*)$, the 1.25.2 fix:
// an item takes no comma, so there is one split to try.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"strings"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

const (
	static = "users://list"
	prefix = static + "/"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{Name: "backtracking-template", Version: "1.0.0", Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
		Capabilities: map[string]any{"resources": map[string]any{}}}
	srv.Methods = map[string]rawmcp.Method{
		"resources/list": func(context.Context, rawmcp.Era, json.RawMessage) (map[string]any, *rawmcp.Error) {
			return map[string]any{"resources": []any{map[string]any{"uri": static, "name": "users", "mimeType": "text/plain"}}}, nil
		},
		"resources/templates/list": func(context.Context, rawmcp.Era, json.RawMessage) (map[string]any, *rawmcp.Error) {
			return map[string]any{"resourceTemplates": []any{map[string]any{"uriTemplate": static + "{/ids*}", "name": "some users", "mimeType": "text/plain"}}}, nil
		},
		"resources/read": func(_ context.Context, _ rawmcp.Era, params json.RawMessage) (map[string]any, *rawmcp.Error) {
			var p struct {
				URI string `json:"uri"`
			}
			_ = json.Unmarshal(params, &p)
			text := "every user"
			if p.URI != static {
				ids, ok := strings.CutPrefix(p.URI, prefix)
				if ok && *fixed {
					ok = matchList(ids, ",")
				} else if ok {
					ok = matchList(ids, "") // BUG: an item may hold the separator
				}
				if !ok {
					return nil, &rawmcp.Error{Code: -32002, Message: "Resource not found", Data: map[string]any{"uri": p.URI}}
				}
				text = "users " + ids
			}
			return map[string]any{"contents": []any{map[string]any{"uri": p.URI, "mimeType": "text/plain", "text": text}}}, nil
		},
	}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// matchList runs ([^/X]+(?:,[^/X]+)*)$ on s as a backtracking engine does,
// X being the characters an item may not hold besides "/": each item
// greedy first, then shorter, until the rest matches.
func matchList(s, notInItem string) bool {
	return item(s, 0, notInItem, func(end int) bool { return more(s, end, notInItem) })
}

// item matches [^/X]+ at s[i:], longest first, and calls then with where it
// ended until then says yes.
func item(s string, i int, notInItem string, then func(int) bool) bool {
	j := i
	for j < len(s) && s[j] != '/' && !strings.ContainsRune(notInItem, rune(s[j])) {
		j++
	}
	for end := j; end > i; end-- {
		if then(end) {
			return true
		}
	}
	return false
}

// more matches (?:,[^/X]+)*$ at s[i:].
func more(s string, i int, notInItem string) bool {
	if i < len(s) && s[i] == ',' && item(s, i+1, notInItem, func(end int) bool { return more(s, end, notInItem) }) {
		return true
	}
	return i == len(s)
}
