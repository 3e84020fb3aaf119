// Command hang is an MCP server whose read loop deadlocks on a burst of client
// notifications: every request after the burst, ping included, goes
// unanswered while the process stays alive.
//
// Bug class 2 (a message handed into a zero-capacity channel nobody drains) and
// 1 (a notification handler waiting on the loop that must deliver its answer).
// It mirrors python-sdk#594, where a progress notification sent into an
// unbuffered memory stream blocked the sender for ever, and
// microsoft/agent-framework#4866, where a tools/list_changed handler awaited a
// request on the receive loop that had to deliver the response.
//
// The server refreshes the client's roots when told they changed. The read
// loop hands each notifications/roots/list_changed to a worker over an
// unbuffered channel; the worker sends roots/list and waits for the answer.
// Exposed by mcpchaos's burst-c2s scenario (100 notifications/roots/list_changed
// right after a tools/call is forwarded): the worker takes the first and waits
// for the roots/list answer, the read loop blocks handing it the second, and
// the answer sits unread behind it in stdin. A plain session sends no such
// notification.
//
// The fixed twin (--fixed) hands over without ever blocking: a channel with
// room for one pending refresh, and a notification arriving while one is
// pending is folded into it.
//
// Server-to-client requests exist only in the stateful era, so this server
// answers server/discover with "method not found" and probing clients fall
// back to initialize.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"sync"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/rawmcp"
)

func main() {
	fixed := flag.Bool("fixed", false, "run the fixed twin")
	flag.Parse()

	srv := &rawmcp.Server{Name: "hang", Version: "1.0.0", StatefulOnly: true}
	w := &rootsWatcher{srv: srv, fixed: *fixed}
	if *fixed {
		w.changed = make(chan struct{}, 1) // FIX: room for one pending refresh
	} else {
		w.changed = make(chan struct{}) // BUG: the read loop waits for the worker
	}
	srv.OnNotification = w.notify
	srv.Tools = []rawmcp.Tool{rawmcp.Echo(), rawmcp.Slow(), w.tool()}
	go w.refresh()

	if err := srv.ServeStdio(); err != nil {
		log.Print(err)
	}
}

// rootsWatcher keeps a copy of the client's roots, refreshed by a worker.
type rootsWatcher struct {
	srv     *rawmcp.Server
	fixed   bool
	changed chan struct{}

	mu    sync.Mutex
	roots json.RawMessage
}

// notify runs on the server's read loop.
func (w *rootsWatcher) notify(n rawmcp.Notification) {
	if n.Method != "notifications/roots/list_changed" {
		return
	}
	if !w.fixed {
		w.changed <- struct{}{} // BUG: blocks while the worker waits for roots/list
		return
	}
	select { // FIX: never blocks; a refresh already pending covers this change
	case w.changed <- struct{}{}:
	default:
	}
}

// refresh is the worker: it asks the client for its roots after each change.
func (w *rootsWatcher) refresh() {
	for range w.changed {
		roots, err := w.srv.Request(context.Background(), "roots/list", nil)
		if err != nil {
			log.Printf("refreshing roots: %v", err)
			continue
		}
		w.mu.Lock()
		w.roots = roots
		w.mu.Unlock()
	}
}

// tool reports the roots as last refreshed.
func (w *rootsWatcher) tool() rawmcp.Tool {
	return rawmcp.Tool{
		Name:        "roots",
		Description: "The client's roots as last refreshed after notifications/roots/list_changed.",
		Run: func(context.Context, *rawmcp.Call) (string, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.roots == nil {
				return "no roots refreshed yet", nil
			}
			return string(w.roots), nil
		},
	}
}
