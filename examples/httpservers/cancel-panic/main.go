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
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"
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
	mux := http.NewServeMux()
	mux.Handle("/mcp", recoverer(http.HandlerFunc(s.serve)))
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("cancel-panic (fixed=%v) on http://%s/mcp", *fixed, *addr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Print(err)
		os.Exit(1)
	}
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

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

func (s *server) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var m message
	if err != nil || json.Unmarshal(body, &m) != nil {
		writeError(w, http.StatusBadRequest, "null", -32700, "Parse error")
		return
	}
	if m.Method == "initialize" {
		sid := newID()
		s.mu.Lock()
		s.sessions[sid] = true
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		writeJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"cancel-panic","version":"1.0.0"}}}`, m.ID))
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	known := s.sessions[sid]
	s.mu.Unlock()
	if !known {
		writeError(w, http.StatusNotFound, "null", -32001, "Session not found")
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
	switch m.Method {
	case "ping":
		writeJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
	case "tools/list":
		writeJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","description":"Answers its text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},{"name":"slow","description":"Answers after ms milliseconds.","inputSchema":{"type":"object","properties":{"ms":{"type":"integer"}}}}]}}`, id))
	case "tools/call":
		writeJSON(w, s.call(r.Context(), sid+"/"+id, id, m.Params.Name, m.Params.Arguments))
	default:
		writeError(w, http.StatusOK, id, -32601, "Method not found")
	}
}

// call runs a tool, registered as running until it answers.
func (s *server) call(ctx context.Context, key, id, name string, args json.RawMessage) string {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.running[key] = &call{cancel: cancel}
	s.mu.Unlock()
	var a struct {
		Text string `json:"text"`
		MS   int    `json:"ms"`
	}
	_ = json.Unmarshal(args, &a)
	text, d := a.Text, 50*time.Millisecond
	if name == "slow" {
		text, d = "done", 300*time.Millisecond
		if a.MS > 0 {
			d = time.Duration(a.MS) * time.Millisecond
		}
	}
	var cancelled bool
	select {
	case <-time.After(d):
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
	res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res)
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

func writeJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

func writeError(w http.ResponseWriter, status int, id string, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
