// Command cancel-panic is an MCP server over streamable HTTP (the stateful
// 2025-11-25 revision) with one planted bug: a notifications/cancelled for
// a call that has just finished dereferences the call's entry, which the
// call removed when it answered, and panics. Like a web framework in debug
// mode, its recovery middleware answers the POST with HTTP 500 and the
// panic's stack as the body, and serves on: nothing shows on stderr, and
// the server never exits. The 500's body is the only trace of the crash.
//
// Bug class 7 (a cancellation racing the response). mcpchaos test --url
// finds it under cancel-race (the cancellation reaches the server just as
// the call's answer leaves it) as a crash, rule crash-http-status,
// signature go:panic. The baseline sends no cancellation, so it is clean.
//
// The fixed twin (--fixed) ignores a cancellation of a request it does not
// know, as the specification asks (MCP 2025-11-25, Utilities ›
// Cancellation: "the request is unknown, or already completed").
//
// Usage: cancel-panic [--fixed] [--addr 127.0.0.1:3000]   (MCP endpoint /mcp)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/httpservers/internal/rawhttp"
)

// call is a tool call running in some session.
type call struct {
	cancel context.CancelFunc
}

type server struct {
	fixed    bool
	mu       sync.Mutex
	sessions map[string]bool
	// running holds the calls in flight, by session and request id.
	running map[string]*call
}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	flag.Parse()
	s := &server{fixed: *fixed, sessions: map[string]bool{}, running: map[string]*call{}}
	rawhttp.Serve("cancel-panic", *fixed, *addr, recoverer(http.HandlerFunc(s.serve)))
}

// recoverer is a debug-mode recovery middleware: a handler's panic becomes
// a 500 whose body is the panic and its stack, and the server goes on.
func recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprintf(w, "panic: %v\n\n%s", v, debug.Stack())
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodDelete:
		id := r.Header.Get("Mcp-Session-Id")
		s.mu.Lock()
		known := s.sessions[id]
		delete(s.sessions, id)
		s.mu.Unlock()
		if !known {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusOK)
	default:
		// No GET stream: the specification lets a server answer 405.
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *server) post(w http.ResponseWriter, r *http.Request) {
	m, ok := rawhttp.Read(w, r)
	if !ok {
		return
	}
	if m.Method == "initialize" {
		sid := rawhttp.NewSessionID()
		s.mu.Lock()
		s.sessions[sid] = true
		s.mu.Unlock()
		rawhttp.Initialize(w, m.ID, sid, "cancel-panic")
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	known := s.sessions[sid]
	s.mu.Unlock()
	if !known {
		rawhttp.SessionNotFound(w)
		return
	}
	if m.ID == nil {
		if m.Method == "notifications/cancelled" {
			s.cancel(sid + "/" + string(m.Params.RequestID))
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := string(m.ID)
	if m.Method != "tools/call" {
		rawhttp.Answer(w, id, m.Method)
		return
	}
	rawhttp.WriteJSON(w, s.call(r.Context(), sid+"/"+id, id, m.Params.Name, m.Params.Arguments))
}

// call runs a tool, registered as running until it answers.
func (s *server) call(ctx context.Context, key, id, name string, args json.RawMessage) string {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.running[key] = &call{cancel: cancel}
	s.mu.Unlock()
	text, failed, takes := rawhttp.Tool(name, args, 50*time.Millisecond)
	var cancelled bool
	select {
	case <-time.After(takes):
	case <-ctx.Done():
		cancelled = true
	}
	// The call is over: it leaves the running set before it answers.
	s.mu.Lock()
	delete(s.running, key)
	s.mu.Unlock()
	if cancelled {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32800,"message":"Request cancelled"}}`, id)
	}
	return rawhttp.Result(id, text, failed)
}

// cancel stops a running call.
func (s *server) cancel(key string) {
	s.mu.Lock()
	c, ok := s.running[key]
	s.mu.Unlock()
	if s.fixed && !ok {
		// FIX: the request is unknown or already completed: ignore it.
		return
	}
	// BUG (without --fixed): a call that just answered is gone; c is nil.
	c.cancel()
}
