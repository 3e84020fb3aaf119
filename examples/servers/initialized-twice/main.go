// Command initialized-twice is an MCP server whose session state machine
// takes a second notifications/initialized for an impossible transition and
// panics: one repeated notification brings the whole server down.
//
// Bug class: the session lifecycle (JSON-RPC: a notification is never
// answered, and a receiver ignores one it cannot use; nothing a peer sends
// without asking for an answer may end the session). It mirrors the servers
// that assert "already initialized" in their notifications/initialized
// handler: a lifecycle kept as a state machine whose invalid transitions are
// fatal (a panic, an unhandled exception, a handler error that tears the
// session down). The Go SDK (modelcontextprotocol/go-sdk) makes the same
// check and only logs it: its ServerSession answers a repeated initialized
// with `duplicate "notifications/initialized" received`, an error a
// notification never carries back, and serves on.
//
// The server moves from awaiting-initialize to initializing when it answers
// initialize, and to ready on notifications/initialized. In a plain session
// the client sends initialized once, so the state machine never sees a
// transition it does not know. Exposed by a duplicated notification
// (`duplicate:on=c2s:notification:notifications/initialized`, a fault no
// scenario of the default matrix holds): the buggy twin panics on the copy
// (crash, signature go:panic, exit 2).
//
// Only the stateful era has notifications/initialized, so this server answers
// server/discover with "method not found" and probing clients fall back to
// initialize, where the bug lives.
//
// The fixed twin (--fixed) logs a notifications/initialized it does not
// expect and ignores it: the session stays ready.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"sync"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	s := &session{tolerant: *fixed}
	srv := &rawmcp.Server{
		Name: "initialized-twice", Version: "1.0.0",
		StatefulOnly:  true,
		Tools:         []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
		Methods:       map[string]rawmcp.Method{"initialize": s.initialize},
		OnInitialized: s.initialized,
	}
	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// state is where a session is in its lifecycle.
type state int

const (
	awaitingInitialize state = iota
	initializing             // initialize answered, notifications/initialized awaited
	ready
)

func (s state) String() string {
	return [...]string{"awaiting initialize", "initializing", "ready"}[s]
}

// session is the lifecycle of the one session a stdio server has.
type session struct {
	tolerant bool // the fixed twin

	mu    sync.Mutex
	state state
}

// initialize moves the session on and leaves the answer to rawmcp.
func (s *session) initialize(context.Context, rawmcp.Era, json.RawMessage) (map[string]any, *rawmcp.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == awaitingInitialize {
		s.state = initializing
	}
	return nil, nil
}

// initialized is notifications/initialized: the session is ready.
func (s *session) initialized(json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == initializing {
		s.state = ready
		log.Print("session ready")
		return
	}
	if !s.tolerant {
		// BUG: a transition the state machine does not know is taken
		// for a broken invariant, and a notification ends the server.
		panic(fmt.Sprintf("notifications/initialized in state %q: session already initialized", s.state))
	}
	// FIX: a notification the server cannot use is logged and ignored.
	log.Printf("notifications/initialized in state %q: ignored", s.state)
}
