package httpchaos

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/ctxsleep"
	"github.com/mcpchaos/mcpchaos/internal/sse"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The faults that bend a response's framing without changing a message:
// a held response head (hold-headers) and an event sent with the id of
// the one before it (event-id-reuse).

// holdHeadFor asks that the head of this exchange's response be held, as
// fault label decided (the first such fault wins).
func (x *exchange) holdHeadFor(label string, d time.Duration) {
	if x.holdBy == "" {
		x.holdBy, x.holdFor = label, d
	}
}

// holdHead holds the upstream's response head, if a fault asked, before
// it is written to the client. The server is not held: its answer waits
// in the connection. When the client gives up or the session ends first,
// what the server sent is read into the record as never delivered, and
// false says the exchange is over.
func (x *exchange) holdHead(resp *http.Response) bool {
	if x.holdBy == "" {
		return true
	}
	label, d := x.holdBy, x.holdFor
	x.holdBy = ""
	// Untie the upstream request from the client's for the hold, so that
	// the server's answer can still be read once the client is gone.
	tied := x.upStop != nil && x.upStop()
	ctx := x.ctx
	if d == 0 {
		d = time.Duration(1<<63 - 1)
	}
	if ctxsleep.Sleep(ctx, d) {
		if tied {
			x.upStop = context.AfterFunc(x.ctx, x.upCancel)
		}
		x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Fault: label, Detail: "the response head goes to the client, held by fault " + label})
		return true
	}
	why := "the response head was held by fault " + label + " until " + ended(x)
	x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Fault: label, Detail: "ended unanswered: " + why})
	if tied && x.p.enter() {
		x.detached = true
		go func() {
			defer x.p.leave()
			defer x.upCancel()
			x.swallow(resp, why)
		}()
	}
	return false
}

// reuseEventID gives an event the id of the event before it in st, as
// fault label decided; it returns the event's bytes and the note that says
// so, or raw unchanged when there is no id to reuse.
func (x *exchange) reuseEventID(st *stream, ev *sse.Event, data, raw []byte, label string) ([]byte, string) {
	skip := ""
	switch {
	case ev.ID == "":
		skip = "the event carries no id"
	case st.lastID == "":
		skip = "no event before it in this stream carried an id"
	}
	if skip != "" {
		x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Fault: label, EventID: ev.ID,
			Detail: "event id not reused by fault " + label + ": " + skip})
		return raw, ""
	}
	return sse.Format(st.lastID, data), "sent with event id " + st.lastID + " (the one before it) instead of " + ev.ID + " by fault " + label
}
