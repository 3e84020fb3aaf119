// Command global-level is an MCP server over streamable HTTP (the stateful
// 2025-11-25 revision), serving any number of sessions, each its own, with
// one planted bug: the log level logging/setLevel sets is one variable for
// the whole server, not the session's. Its tool calls log a debug line and
// an info line, each sent when the level lets it through. Once a second
// client sets debug, the first client, which set info, gets the debug
// lines it asked not to get: one client's logging/setLevel changes what
// another receives. One client alone is served right, so a single-session
// test never sees it.
//
// The pattern is common in servers that keep their settings in module
// state (a global logger level, Python's logging.getLogger().setLevel in a
// setLevel handler). mcpchaos test --url finds it under sessions (the
// first session sets info, the others debug once it has) as
// cross-session-log-level, a warning: the schema's "should".
//
// The fixed twin (--fixed) keeps the level in the session.
//
// Usage: global-level [--fixed] [--addr 127.0.0.1:3000]   (MCP endpoint /mcp)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/httpservers/internal/rawhttp"
)

// levels are MCP's log levels, lowest first.
var levels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

type server struct {
	fixed    bool
	sessions rawhttp.Sessions
	mu       sync.Mutex
	// levels are the sessions' own levels (the fixed twin's), by session
	// id; level is the one level of the buggy twin, whoever set it.
	levels map[string]int
	level  int
}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	flag.Parse()
	s := &server{fixed: *fixed, levels: map[string]int{}}
	rawhttp.Serve("global-level", *fixed, *addr, rawhttp.Endpoint(s.post, s.sessions.End))
}

func (s *server) post(w http.ResponseWriter, r *http.Request) {
	m, ok := rawhttp.Read(w, r)
	if !ok {
		return
	}
	if m.Method == "initialize" {
		s.sessions.Open(w, m.ID, "global-level", `{"tools":{},"logging":{}}`)
		return
	}
	sid, ok := s.sessions.Find(w, r)
	if !ok {
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := string(m.ID)
	switch m.Method {
	case "logging/setLevel":
		level := slices.Index(levels, m.Params.Level)
		if level < 0 {
			rawhttp.WriteError(w, http.StatusOK, id, -32602, "Invalid params: unknown level")
			return
		}
		s.mu.Lock()
		if s.fixed {
			s.levels[sid] = level
		} else {
			// BUG (without --fixed): the server's level, not the session's.
			s.level = level
		}
		s.mu.Unlock()
		rawhttp.WriteJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
	case "tools/call":
		s.call(w, r, sid, id, m)
	default:
		rawhttp.Answer(w, id, m.Method)
	}
}

// call runs a tool, answering on an SSE stream: a debug and an info log
// line where the level lets them through, then the result.
func (s *server) call(w http.ResponseWriter, r *http.Request, sid, id string, m rawhttp.Message) {
	rawhttp.StartEvents(w)
	text, failed, takes := rawhttp.Tool(m.Params.Name, m.Params.Arguments, 50*time.Millisecond)
	select {
	case <-time.After(takes):
	case <-r.Context().Done():
		return
	}
	s.mu.Lock()
	level := s.levels[sid]
	if !s.fixed {
		level = s.level
	}
	s.mu.Unlock()
	data, _ := json.Marshal(map[string]any{"tool": m.Params.Name, "arguments": m.Params.Arguments})
	for _, l := range []string{"debug", "info"} {
		if slices.Index(levels, l) >= level {
			_ = rawhttp.WriteEvent(w, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":%q,"logger":"global-level","data":%s}}`, l, data))
		}
	}
	_ = rawhttp.WriteEvent(w, rawhttp.Result(id, text, failed))
}
