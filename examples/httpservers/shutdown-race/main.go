// Command shutdown-race is an MCP server over streamable HTTP (the stateful
// 2025-11-25 revision), serving any number of sessions, with one planted
// bug in its shutdown. On SIGTERM it drains the calls in flight in every
// session, so that no client waits on a call that will never answer: it
// cancels each call and waits for it to end. It walks its table of calls
// by index up to the length it read when it began, but each call it
// cancels leaves the table as it ends, so the table shrinks under the walk
// and the walk runs past its end: "panic: runtime error: index out of
// range", the Go form of Python's "dictionary changed size during
// iteration" (the seeds' bug class 3: a table of requests mutated while
// the shutdown iterates it).
//
// With one call in flight the walk ends before it can overrun, so one
// polite client never sees it; mcpchaos test --url finds it under
// sessions-shutdown (three sessions with calls in flight, and SIGTERM) as
// a crash, rule crash-signature, signature go:panic.
//
// The fixed twin (--fixed) walks a copy of the table taken before the walk.
//
// Usage: shutdown-race [--fixed] [--addr 127.0.0.1:3000]   (MCP endpoint /mcp)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/httpservers/internal/rawhttp"
)

// call is a tool call running in some session.
type call struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once the call has left the table
}

type server struct {
	fixed    bool
	sessions rawhttp.Sessions
	mu       sync.Mutex
	// running holds the calls in flight, in every session, oldest first.
	running []*call
}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	flag.Parse()
	s := &server{fixed: *fixed}
	rawhttp.ServeWithStop("shutdown-race", *fixed, *addr, rawhttp.Endpoint(s.post, s.sessions.End), s.drain)
}

func (s *server) post(w http.ResponseWriter, r *http.Request) {
	m, ok := rawhttp.Read(w, r)
	if !ok {
		return
	}
	if m.Method == "initialize" {
		s.sessions.Open(w, m.ID, "shutdown-race", `{"tools":{}}`)
		return
	}
	if _, ok := s.sessions.Find(w, r); !ok {
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	id := string(m.ID)
	if m.Method != "tools/call" {
		rawhttp.Answer(w, id, m.Method)
		return
	}
	rawhttp.WriteJSON(w, s.call(r.Context(), id, m.Params.Name, m.Params.Arguments))
}

// call runs a tool, in the table of running calls until it answers.
func (s *server) call(ctx context.Context, id, name string, args json.RawMessage) string {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &call{cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	s.running = append(s.running, c)
	s.mu.Unlock()
	text, failed, takes := rawhttp.Tool(name, args, 50*time.Millisecond)
	var cancelled bool
	select {
	case <-time.After(takes):
	case <-ctx.Done():
		cancelled = true
	}
	s.mu.Lock()
	s.running = slices.DeleteFunc(s.running, func(o *call) bool { return o == c })
	s.mu.Unlock()
	close(c.done)
	if cancelled {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"the server is shutting down"}}`, id)
	}
	return rawhttp.Result(id, text, failed)
}

// drain cancels every call in flight and waits for each to end.
func (s *server) drain() {
	if s.fixed {
		// FIX: walk a copy; the calls leave the table as they end.
		s.mu.Lock()
		calls := slices.Clone(s.running)
		s.mu.Unlock()
		for _, c := range calls {
			c.cancel()
			<-c.done
		}
		return
	}
	s.mu.Lock()
	n := len(s.running)
	s.mu.Unlock()
	for i := 0; i < n; i++ {
		s.mu.Lock()
		// BUG (without --fixed): each call cancelled below left the table,
		// so by the walk's middle index i is past its end.
		c := s.running[i]
		s.mu.Unlock()
		c.cancel()
		<-c.done
	}
}
