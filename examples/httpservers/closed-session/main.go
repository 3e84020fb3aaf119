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
// Usage: closed-session [--fixed] [--addr 127.0.0.1:3000]   (MCP endpoint /mcp)
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
	"sync"
	"syscall"
	"time"
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
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", s.serve)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("closed-session (fixed=%v) on http://%s/mcp", *fixed, *addr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Print(err)
		os.Exit(1)
	}
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodDelete:
		s.end(w, r)
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
		id := newID()
		ctx, cancel := context.WithCancel(context.Background())
		sess := &session{out: make(chan answer, 16), ctx: ctx, cancel: cancel}
		go sess.route()
		s.mu.Lock()
		s.sessions[id] = sess
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", id)
		writeJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"closed-session","version":"1.0.0"}}}`, m.ID))
		return
	}
	s.mu.Lock()
	sess := s.sessions[r.Header.Get("Mcp-Session-Id")]
	s.mu.Unlock()
	if sess == nil {
		writeError(w, http.StatusNotFound, "null", -32001, "Session not found")
		return
	}
	if m.ID == nil {
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
		done := make(chan json.RawMessage, 1)
		sess.waiting.Store(id, done)
		sess.running.Add(1)
		go sess.call(id, m.Params.Name, m.Params.Arguments)
		select {
		case raw := <-done:
			writeJSON(w, string(raw))
		case <-r.Context().Done():
		}
	default:
		writeError(w, http.StatusOK, id, -32601, "Method not found")
	}
}

// call runs a tool and answers through the session's channel.
func (sess *session) call(id, name string, args json.RawMessage) {
	defer sess.running.Done()
	var a struct {
		Text string `json:"text"`
		MS   int    `json:"ms"`
	}
	_ = json.Unmarshal(args, &a)
	text := a.Text
	// Every call takes a while, as a call that does I/O does: calls
	// overlap, as they do in a real session.
	d := 100 * time.Millisecond
	if name == "slow" {
		text, d = "done", 300*time.Millisecond
		if a.MS > 0 {
			d = time.Duration(a.MS) * time.Millisecond
		}
	}
	select {
	case <-time.After(d):
	case <-sess.ctx.Done():
		// The fixed twin's DELETE cancelled it: its POST gets an error
		// now rather than waiting for an answer that will not come.
		if ch, ok := sess.waiting.LoadAndDelete(id); ok {
			ch.(chan json.RawMessage) <- json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"the session ended"}}`, id))
		}
		return
	}
	res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	// BUG (without --fixed): the session's DELETE may have closed out.
	sess.out <- answer{id: id, raw: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res))}
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
