package faults

import (
	"github.com/mcpchaos/mcpchaos/wire"
)

// Pending is a request that was received and not yet answered.
type Pending struct {
	Dir           wire.Direction // the way the request travelled
	ID            string
	Method        string
	ProgressToken string
	// Tool is params.name of a tools/call request, recorded only when a
	// trigger uses tool=.
	Tool    string
	ordinal uint64
	// wire is the id the receiver got when an id fault changed it; "" when
	// it got ID.
	wire string
	// closed marks a request answered, forgotten, refused or replaced by
	// another under its id: it stays in the order until trimmed.
	closed bool
	// answered says an answer to it came.
	answered bool
	// refused says why its receiver never held it (an HTTP client error
	// status refused it, or it could not be delivered; see Plan.Refused).
	refused string
	// landings are the firings whose effect needs its receiver to hold it
	// (an id collision borrowing its id; see landing.go).
	landings []*landing
}

// wireID is the id the request's receiver got.
func (p *Pending) wireID() string {
	if p.wire != "" {
		return p.wire
	}
	return p.ID
}

// inFlight tracks open requests per direction by id, and in the order they
// came. Its size is the number of open requests, up to maxOpen a direction:
// a peer that never answers (an echo, a server that ignores calls) must not
// grow a long session's memory without end, so past maxOpen the oldest open
// request is forgotten, as if lost.
type inFlight struct {
	open  [3]map[string]*Pending // indexed by wire.Direction
	order [3][]*Pending          // oldest first; may hold answered ones
}

// maxOpen is how many unanswered requests a direction keeps: far more than
// any real peer has in flight.
const maxOpen = 1024

func newInFlight() *inFlight {
	t := &inFlight{}
	t.open[wire.ToServer] = map[string]*Pending{}
	t.open[wire.ToClient] = map[string]*Pending{}
	return t
}

// observe updates the table for a message travelling in dir and returns the
// request it answers, if it is an answer to one we saw. A request's entry
// is made by the caller, outside the plan's lock.
func (t *inFlight) observe(dir wire.Direction, m *wire.Message, ordinal uint64, fresh *Pending) *Pending {
	switch {
	case m.Kind == wire.Request:
		*fresh = Pending{Dir: dir, ID: m.ID, Method: m.Method, ProgressToken: m.ProgressToken, ordinal: ordinal}
		if old := t.open[dir][m.ID]; old != nil {
			old.closed = true
		}
		t.open[dir][m.ID] = fresh
		t.order[dir] = append(t.order[dir], fresh)
		t.trim(dir)
	case m.IsAnswer():
		requests := t.open[dir.Reverse()]
		if p, ok := requests[m.ID]; ok {
			delete(requests, m.ID)
			p.closed, p.answered = true, true
			return p
		}
	}
	return nil
}

// trim forgets the oldest open requests of dir past maxOpen, and drops the
// closed ones from the order once they are most of it.
func (t *inFlight) trim(dir wire.Direction) {
	open, order := t.open[dir], t.order[dir]
	for len(open) > maxOpen && len(order) > 0 {
		if p := order[0]; !p.closed {
			delete(open, p.ID)
			p.closed = true
		}
		order = order[1:]
	}
	if len(order) > 2*len(open)+64 {
		live := make([]*Pending, 0, 2*len(open)+64)
		for _, p := range order {
			if !p.closed {
				live = append(live, p)
			}
		}
		order = live
	}
	t.order[dir] = order
}

// refuse closes p, which its receiver never held, and says why.
func (t *inFlight) refuse(p *Pending, why string) {
	if !p.closed {
		if t.open[p.Dir][p.ID] == p {
			delete(t.open[p.Dir], p.ID)
		}
		p.closed = true
	}
	if p.refused == "" {
		p.refused = why
	}
}

func (t *inFlight) count() int {
	return len(t.open[wire.ToServer]) + len(t.open[wire.ToClient])
}

// sent lists the open requests that travelled in dir, oldest first, so that a
// seeded choice among them is stable.
func (t *inFlight) sent(dir wire.Direction) []*Pending {
	out := make([]*Pending, 0, len(t.open[dir]))
	for _, p := range t.order[dir] {
		if !p.closed {
			out = append(out, p)
		}
	}
	return out
}
