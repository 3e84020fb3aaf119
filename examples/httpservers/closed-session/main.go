// Command closed-session is an MCP server over streamable HTTP (the
// stateful 2025-11-25 revision) with one planted bug: ending a session
// (DELETE) closes the channel its running tool calls answer into, so a call
// still running when its session ends panics with "send on closed channel"
// and takes the whole server down, every other session with it.
//
// Bug class 3 (the transport closes while handlers run; they answer into a
// closed stream): the HTTP face of python-sdk #526/#2306, where a closed
// write stream met a handler's answer (ClosedResourceError). mcpchaos test
// --url finds it under end-session-inflight (the session ended under three
// running calls) as a crash, signature go:panic. A plain session ends only
// once its calls are answered, so the baseline is clean.
//
// The fixed twin (--fixed) cancels the session's running calls on DELETE
// and closes the channel only once they have returned.
//
// Both twins also hand each answer to the POST waiting for it by request
// id (bug class 8, not the planted one): two calls under one id leave one
// POST waiting forever, which id-collision finds as a hang.
//
// Usage: closed-session [--fixed] [--addr 127.0.0.1:3000]   (MCP endpoint /mcp)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/httpservers/internal/rawhttp"
)

// session is one client's session: its running calls answer through out.
type session struct {
	out     chan answer
	waiting sync.Map // request id -> chan json.RawMessage
	running sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

type answer struct {
	id  string
	raw json.RawMessage
}

type server struct {
	fixed    bool
	mu       sync.Mutex
	sessions map[string]*session
}

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	flag.Parse()
	s := &server{fixed: *fixed, sessions: map[string]*session{}}
	rawhttp.Serve("closed-session", *fixed, *addr, rawhttp.Endpoint(s.post, s.end))
}

func (s *server) post(w http.ResponseWriter, r *http.Request) {
	m, ok := rawhttp.Read(w, r)
	if !ok {
		return
	}
	if m.Method == "initialize" {
		ctx, cancel := context.WithCancel(context.Background())
		sess := &session{out: make(chan answer, 16), ctx: ctx, cancel: cancel}
		go sess.route()
		sid := rawhttp.NewSessionID()
		s.mu.Lock()
		s.sessions[sid] = sess
		s.mu.Unlock()
		rawhttp.Initialize(w, m.ID, sid, "closed-session")
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
	if m.Method != "tools/call" {
		rawhttp.Answer(w, id, m.Method)
		return
	}
	done := make(chan json.RawMessage, 1)
	sess.waiting.Store(id, done)
	sess.running.Add(1)
	go sess.call(id, m.Params.Name, m.Params.Arguments)
	select {
	case raw := <-done:
		rawhttp.WriteJSON(w, string(raw))
	case <-r.Context().Done():
	}
}

// call runs a tool and answers through the session's channel.
func (sess *session) call(id, name string, args json.RawMessage) {
	defer sess.running.Done()
	text, failed, takes := rawhttp.Tool(name, args, 100*time.Millisecond)
	select {
	case <-time.After(takes):
	case <-sess.ctx.Done():
		// The fixed twin's DELETE cancelled it: its POST gets an error
		// now rather than waiting for an answer that will not come.
		if ch, ok := sess.waiting.LoadAndDelete(id); ok {
			ch.(chan json.RawMessage) <- json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"the session ended"}}`, id))
		}
		return
	}
	// BUG (without --fixed): the session's DELETE may have closed out.
	sess.out <- answer{id: id, raw: json.RawMessage(rawhttp.Result(id, text, failed))}
}

// route hands each answer to the POST waiting for it.
func (sess *session) route() {
	for a := range sess.out {
		if ch, ok := sess.waiting.LoadAndDelete(a.id); ok {
			ch.(chan json.RawMessage) <- a.raw
		}
	}
}

// end is DELETE: the session ends.
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
	if s.fixed {
		// FIX: stop the running calls, and close only once they returned.
		sess.cancel()
		sess.running.Wait()
	}
	close(sess.out)
	w.WriteHeader(http.StatusOK)
}
