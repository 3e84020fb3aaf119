// Command shared-server is an MCP server over streamable HTTP (the stateful
// 2025-11-25 revision) with one planted bug: its sessions are its own, but
// the server that runs their tool calls is one object shared by all of
// them, and its "current" session is overwritten by each initialize. Every
// message a call sends (its progress, its log line, its result) goes
// through current, down current's open POST stream with the call's request
// id. With two clients whose calls overlap, and that use the same ids (every
// client numbers its requests from 1), client A's progress, log and result,
// its echoed text in them, go down the stream of B, the client that
// initialized last: B takes A's answer for its own (B's own result comes
// after its stream ended and is dropped), and A's POST waits for an answer
// that never comes.
//
// It mirrors the TypeScript SDK's cross-client leak, GHSA-345p-7cg4-v4c7
// (CVE-2026-25536, @modelcontextprotocol/sdk 1.10.0 to 1.25.3): one McpServer
// shared by every session, whose connect() for a new session overwrote the
// server's transport, so what a handler sent went to the transport that
// connected last, which looked the stream up by request id in its own
// session (typescript-sdk #1483: the final responses too, for all that PR
// #820 had them keep the transport they came from). State shared between
// concurrent requests, answers crossed by request id (bug classes 7 and 8),
// across sessions. One client alone is served right: current is its own
// session, so a single-session test never sees the bug.
//
// The fixed twin (--fixed) sends each message through the session its
// request came from, as a server per session does (the SDK's fix, 1.26.0,
// makes a second connect() of one server throw).
//
// Both twins key a session's open POST streams by request id: a second call
// under an id still open in the session gets an error, not the stream.
//
// Usage: shared-server [--fixed] [--addr 127.0.0.1:3000]   (MCP endpoint /mcp)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/httpservers/internal/rawhttp"
)

// echoTakes is how long echo works: long enough for the calls of two
// clients sent together to overlap.
const echoTakes = 100 * time.Millisecond

// levels are MCP's log levels, lowest first.
var levels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// session is one client's session.
type session struct {
	id    string
	ended chan struct{} // closed by DELETE: its waiting POSTs return
	mu    sync.Mutex
	quiet bool // logging/setLevel set a level above info, the calls' level
	// streams are the POSTs waiting for their answer, by request id. A
	// stream is written only under mu and while it is here: its POST
	// takes it out before it returns, after which its writer is dead.
	streams map[string]*stream
}

// stream is a tools/call POST answered as SSE.
type stream struct {
	w        http.ResponseWriter
	answered chan struct{} // closed once its result went down it
}

type server struct {
	fixed    bool
	echo     time.Duration // how long echo works
	mu       sync.Mutex
	sessions map[string]*session
	// current is the session that initialized last, the "transport" of
	// the one shared server object. BUG (without --fixed): every call
	// sends through it, whichever session the call came from.
	current *session
}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	flag.Parse()
	rawhttp.Serve("shared-server", *fixed, *addr, handler(*fixed, echoTakes))
}

// handler is the MCP endpoint, buggy or fixed, whose echo works for echo
// (echoTakes in the command; a test spaces its calls wider).
func handler(fixed bool, echo time.Duration) http.Handler {
	s := &server{fixed: fixed, echo: echo, sessions: map[string]*session{}}
	return rawhttp.Endpoint(s.post, s.end)
}

func (s *server) post(w http.ResponseWriter, r *http.Request) {
	m, ok := rawhttp.Read(w, r)
	if !ok {
		return
	}
	if m.Method == "initialize" {
		sess := &session{id: rawhttp.NewSessionID(), ended: make(chan struct{}), streams: map[string]*stream{}}
		s.mu.Lock()
		s.sessions[sess.id] = sess
		s.current = sess // the shared server connects to the newest session
		s.mu.Unlock()
		rawhttp.InitializeWith(w, m.ID, sess.id, "shared-server", `{"tools":{},"logging":{}}`)
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
	case "tools/call":
		s.call(w, r, sess, id, m)
	case "logging/setLevel":
		level := slices.Index(levels, m.Params.Level)
		if level < 0 {
			rawhttp.WriteError(w, http.StatusOK, id, -32602, "Invalid params: unknown level")
			return
		}
		// The calls log at info alone: a level above it silences them.
		sess.mu.Lock()
		sess.quiet = level > slices.Index(levels, "info")
		sess.mu.Unlock()
		rawhttp.WriteJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
	default:
		rawhttp.Answer(w, id, m.Method)
	}
}

// call runs a tool for request id of sess, answering on an SSE stream on
// its POST, and holds the POST until its result went down the stream, the
// client left or the session ended.
func (s *server) call(w http.ResponseWriter, r *http.Request, sess *session, id string, m rawhttp.Message) {
	st := &stream{w: w, answered: make(chan struct{})}
	sess.mu.Lock()
	if _, open := sess.streams[id]; open {
		sess.mu.Unlock()
		rawhttp.WriteError(w, http.StatusOK, id, -32600, "request id already in use in this session")
		return
	}
	sess.streams[id] = st
	// The head goes out under the lock, before anyone may write an event.
	rawhttp.StartEvents(w)
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		if sess.streams[id] == st {
			delete(sess.streams, id)
		}
		sess.mu.Unlock()
	}()

	text, failed, takes := rawhttp.Tool(m.Params.Name, m.Params.Arguments, s.echo)
	select {
	case <-time.After(takes):
	case <-r.Context().Done():
		return
	case <-sess.ended:
		return
	}
	if tok := m.Params.Meta.ProgressToken; tok != nil {
		s.send(sess, id, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1,"total":1}}`, tok), false)
	}
	sess.mu.Lock()
	quiet := sess.quiet
	sess.mu.Unlock()
	if !quiet {
		data, _ := json.Marshal(map[string]any{"tool": m.Params.Name, "arguments": m.Params.Arguments})
		s.send(sess, id, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"shared-server","data":%s}}`, data), false)
	}
	s.send(sess, id, rawhttp.Result(id, text, failed), true)

	// In the buggy twin, the result may have gone down another session's
	// stream: then this POST waits for what will never come, until its
	// client gives up or the session ends.
	select {
	case <-st.answered:
	case <-r.Context().Done():
	case <-sess.ended:
	}
}

// send sends msg, a message of the call that sess's request id made, down
// the stream open for that id; a result ends the stream.
func (s *server) send(sess *session, id, msg string, result bool) {
	to := sess
	if !s.fixed {
		// BUG (without --fixed): through the session that initialized
		// last, read at each send as the SDK read its transport.
		s.mu.Lock()
		to = s.current
		s.mu.Unlock()
	}
	to.mu.Lock()
	defer to.mu.Unlock()
	st := to.streams[id]
	if st == nil {
		log.Printf("shared-server: dropped a message of request %s: session %.8s has no stream open for it", id, to.id)
		return
	}
	if err := rawhttp.WriteEvent(st.w, msg); err != nil {
		log.Printf("shared-server: writing to request %s of session %.8s: %v", id, to.id, err)
	}
	if result {
		delete(to.streams, id)
		close(st.answered)
	}
}

// end is DELETE: the session ends, and the POSTs it holds return.
func (s *server) end(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	sess := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if sess == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	close(sess.ended)
	w.WriteHeader(http.StatusOK)
}
