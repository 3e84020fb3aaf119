package faults

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/mcpchaos/mcpchaos/wire"
)

// The id faults (id-type, id-collision) send a request on under an id other
// than the one its sender gave it. The plan remembers what it changed, so that
// the receiver's answer goes back under the sender's id: a correct peer on
// either side sees nothing wrong end to end, and only a peer that mishandles
// the id it was given shows up. Answers are matched in Receive, before the
// in-flight table sees them, so the table and the triggers see the sender's
// ids.

// idEntry is one request its receiver holds under a rewritten (or collided)
// id.
type idEntry struct {
	orig  string // the id the request's sender gave it
	label string // the fault that rewrote it; "" for the request that had the id first
}

// idMap holds, by the direction requests travelled and then by the id their
// receiver got, the requests the receiver holds under that id, in the order
// it got them. An id-type rewrite is one entry; a collision is two or more,
// the first being the request that had the id first.
type idMap map[wire.Direction]map[string][]idEntry

func (m idMap) add(dir wire.Direction, id string, e ...idEntry) {
	if m[dir] == nil {
		m[dir] = map[string][]idEntry{}
	}
	m[dir][id] = append(m[dir][id], e...)
}

func (m idMap) has(dir wire.Direction, id string) bool { return len(m[dir][id]) > 0 }

// take returns, for an answer with id to a request that travelled in dir,
// the request it goes back to: the one its sender gave the id orig, when
// the transport knows which request the answer answers (an HTTP exchange
// carries one request, and its answer; none, when that request is not
// held under id), else the first one the receiver got under that id.
func (m idMap) take(dir wire.Direction, id, orig string) (idEntry, bool) {
	q := m[dir][id]
	i := 0
	if orig != "" {
		i = slices.IndexFunc(q, func(e idEntry) bool { return e.orig == orig })
	}
	if i < 0 || len(q) == 0 {
		return idEntry{}, false
	}
	e := q[i]
	m.remove(dir, id, i)
	return e, true
}

// remove deletes the i-th request the receiver holds under id.
func (m idMap) remove(dir wire.Direction, id string, i int) {
	q := m[dir][id]
	if len(q) == 1 {
		delete(m[dir], id)
		return
	}
	if i == 0 {
		m[dir][id] = q[1:]
		return
	}
	m[dir][id] = slices.Delete(q, i, i+1)
}

// forget deletes the request its sender gave the id orig from those the
// receiver holds under id: the receiver never held it (Plan.Refused), so
// no answer goes back to it.
func (m idMap) forget(dir wire.Direction, id, orig string) {
	if i := slices.IndexFunc(m[dir][id], func(e idEntry) bool { return e.orig == orig }); i >= 0 {
		m.remove(dir, id, i)
	}
}

// translate is what Receive does with an answer: when it answers a request
// an id fault rewrote, it returns the answer with the sender's id and a note
// for the transcript. raw is nil when the answer goes on as it is. orig,
// when not "", is the sender's id of the request the answer is known to
// answer (see take).
func (m idMap) translate(dir wire.Direction, msg *wire.Message, orig string) (raw []byte, note string) {
	if !msg.IsAnswer() {
		return nil, ""
	}
	e, ok := m.take(dir.Reverse(), msg.ID, orig)
	if !ok || e.orig == msg.ID {
		return nil, ""
	}
	raw, ok = wire.ReplaceID(msg.Raw, e.orig)
	if !ok {
		return nil, ""
	}
	return raw, fmt.Sprintf("id %s translated back to %s, the id the %s gave the request that fault %s rewrote", msg.ID, e.orig, sender(dir.Reverse()), e.label)
}

// translateCancel is what Receive does with a cancellation travelling in
// dir: it names the request by the id its sender gave it, and when id-type
// sent that request on under another id the receiver knows it by that one.
// A request in a collision keeps the id its sender wrote: the receiver holds
// two requests under the shared id and could not tell which to cancel.
func (p *Plan) translateCancel(dir wire.Direction, m *wire.Message) (raw []byte, note string) {
	if m.Kind != wire.Notification || m.Method != "notifications/cancelled" {
		return nil, ""
	}
	start, end, ok := wire.MemberSpan(m.Raw, "params", "requestId")
	if !ok {
		return nil, ""
	}
	id := string(m.Raw[start:end])
	r := p.inflight.open[dir][id]
	if r == nil || r.wire == "" || len(p.ids[dir][r.wire]) != 1 {
		return nil, ""
	}
	raw, ok = wire.ReplaceMember(m.Raw, r.wire, "params", "requestId")
	if !ok {
		return nil, ""
	}
	return raw, fmt.Sprintf("requestId %s translated to %s, the id the %s got the request under from fault %s", id, r.wire, receiver(dir), p.ids[dir][r.wire][0].label)
}

// sender names the peer that sends requests travelling in dir.
func sender(dir wire.Direction) string {
	if dir == wire.ToServer {
		return "client"
	}
	return "server"
}

// own is the in-flight entry of the triggering request, nil when it has none
// (it is not a request, or its answer came already).
func (c *FireContext) own() *Pending {
	if c.Message.Kind != wire.Request {
		return nil
	}
	return c.plan.inflight.open[c.Dir][c.Message.ID]
}

// rewritten says why an id fault skips a request whose id an earlier fault
// in the plan already rewrote on its way: one rewrite per request, so that
// the plan remembers one id for it.
func (c *FireContext) rewritten() string {
	if p := c.own(); p != nil && p.wire != "" {
		return fmt.Sprintf("skipped: an earlier fault sends this request on with id %s already", p.wire)
	}
	return ""
}

// idInUse reports whether the receiver of requests travelling in dir holds a
// request under id, or may still answer one under it.
func (c *FireContext) idInUse(dir wire.Direction, id string) bool {
	if c.plan.ids.has(dir, id) {
		return true
	}
	own := c.own()
	for _, p := range c.plan.inflight.open[dir] {
		if p != own && p.wireID() == id {
			return true
		}
	}
	return false
}

// rewriteID records that the triggering request goes on with id instead of
// its own. first, when not nil, is the request that had id first (a
// collision): it takes the first answer with id.
func (c *FireContext) rewriteID(id string, first *Pending) {
	if first != nil && !c.plan.ids.has(c.Dir, id) {
		c.plan.ids.add(c.Dir, id, idEntry{orig: first.ID})
	}
	c.plan.ids.add(c.Dir, id, idEntry{orig: c.Message.ID, label: c.label})
	if p := c.own(); p != nil {
		p.wire = id
	}
}

// freeNumber picks the number an id-type rewrite gives a string id: the
// string's own digits when it holds a plain integer and that number is free,
// else a number drawn from the seed that no request in flight has.
func (c *FireContext) freeNumber(id string) (string, bool) {
	if s, err := strconv.Unquote(id); err == nil {
		if n, err := strconv.ParseUint(s, 10, 53); err == nil && strconv.FormatUint(n, 10) == s && !c.idInUse(c.Dir, s) {
			return s, true
		}
	}
	for range 64 {
		n := strconv.Itoa(1_000_000 + c.Draws.Intn(9_000_000))
		if !c.idInUse(c.Dir, n) {
			return n, true
		}
	}
	return "", false
}
