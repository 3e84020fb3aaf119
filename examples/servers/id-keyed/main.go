// Command id-keyed is an MCP server that keys the requests it is running by
// their JSON-RPC id, and takes a request whose id is already running for a
// retransmission of that request: it drops it, and never answers it.
//
// Bug class 8 (duplicate in-flight request ids). It mirrors the servers and
// SDK sessions that keep their in-flight requests in a map keyed by id (for
// cancellation, progress or "at most once" retries) and so hold one entry
// where the client has two requests: one of the two is lost, or its answer
// goes to the other. JSON-RPC leaves the reuse of an id in flight to the
// client's conscience; a server that silently drops the second request turns
// the client's slip into a call that never returns.
//
// Exposed by mcpchaos's id-collision fault (a tools/call is sent on under the
// id of another call still running): the server drops it, the client's call
// gets no answer. The verdict is a warning, unanswered-reused-id (or
// lost-response when the session ends first): the client broke the base
// protocol's "MUST NOT" reuse first, and go-sdk v1.8.0 drops such a request
// by design, but a server that drops it without an error leaves the call
// waiting forever. A plain session never reuses an id in flight, so nothing
// is dropped.
//
// The fixed twin (--fixed) runs every request it receives, and owes and
// writes one answer for each, whatever their ids.
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{
		Name: "id-keyed", Version: "1.0.0",
		Tools: []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow()},
	}
	if !*fixed {
		// BUG: a second request under a running id is taken for a retry.
		r := &running{ids: map[string]bool{}}
		srv.OnRequest = r.admit
		srv.WriteLine = r.written
	}
	// FIX: no OnRequest hook; every request is run and answered.

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// running is the set of request ids being handled.
type running struct {
	mu  sync.Mutex
	ids map[string]bool
}

// admit runs a request unless its id is running already (or was answered
// within rememberFor).
func (r *running) admit(id json.RawMessage, method string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids[string(id)] {
		log.Printf("request %s (%s) is a retransmission of the one running: ignored", id, method)
		return false
	}
	r.ids[string(id)] = true
	return true
}

// rememberFor is how long an answered id stays known, as in an "at most
// once" retry cache: a retransmission that arrives just after the answer
// went out is dropped too. It also makes the bug independent of timing: a
// colliding call is dropped whether or not the call whose id it took has
// finished by the time it arrives.
const rememberFor = 2 * time.Second

// written forgets a request a while after its answer is written.
func (r *running) written(out io.Writer, line []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) == nil && m.ID != nil && m.Method == "" {
		id := string(m.ID)
		time.AfterFunc(rememberFor, func() {
			r.mu.Lock()
			delete(r.ids, id)
			r.mu.Unlock()
		})
	}
	_, err := out.Write(line)
	return err
}
