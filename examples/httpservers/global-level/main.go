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

type session struct {
	level int // the session's own level (the fixed twin's)
}

type server struct {
	fixed    bool
	mu       sync.Mutex
	sessions map[string]*session
	// level is the one level of the buggy twin, whoever set it.
	level int
}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	flag.Parse()
	s := &server{fixed: *fixed, sessions: map[string]*session{}}
	rawhttp.Serve("global-level", *fixed, *addr, rawhttp.Endpoint(s.post, s.end))
}

func (s *server) end(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	sess := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if sess == nil {
		rawhttp.SessionNotFound(w)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *server) post(w http.ResponseWriter, r *http.Request) {
	m, ok := rawhttp.Read(w, r)
	if !ok {
		return
	}
	if m.Method == "initialize" {
		sid := rawhttp.NewSessionID()
		s.mu.Lock()
		s.sessions[sid] = &session{}
		s.mu.Unlock()
		rawhttp.InitializeWith(w, m.ID, sid, "global-level", `{"tools":{},"logging":{}}`)
		return
	}
	s.mu.Lock()
	sess := s.sessions[r.Header.Get("Mcp-Session-Id")]
	s.mu.Unlock()
	if sess == nil {
		rawhttp.SessionNotFound(w)
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
			sess.level = level
		} else {
			// BUG (without --fixed): the server's level, not the session's.
			s.level = level
		}
		s.mu.Unlock()
		rawhttp.WriteJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
	case "tools/call":
		s.call(w, r, sess, id, m)
	default:
		rawhttp.Answer(w, id, m.Method)
	}
}

// call runs a tool, answering on an SSE stream: a debug and an info log
// line where the level lets them through, then the result.
func (s *server) call(w http.ResponseWriter, r *http.Request, sess *session, id string, m rawhttp.Message) {
	rawhttp.StartEvents(w)
	text, takes := rawhttp.Tool(m.Params.Name, m.Params.Arguments, 50*time.Millisecond)
	select {
	case <-time.After(takes):
	case <-r.Context().Done():
		return
	}
	s.mu.Lock()
	level := sess.level
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
	_ = rawhttp.WriteEvent(w, rawhttp.Result(id, text))
}
