package faults

import (
	"sort"

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
}

// wireID is the id the request's receiver got.
func (p *Pending) wireID() string {
	if p.wire != "" {
		return p.wire
	}
	return p.ID
}

// inFlight tracks open requests per direction by id. Its size is the number of
// open requests, which is what keeps a long session's memory bounded.
type inFlight struct {
	open map[wire.Direction]map[string]*Pending
}

func newInFlight() *inFlight {
	return &inFlight{open: map[wire.Direction]map[string]*Pending{
		wire.ToServer: {},
		wire.ToClient: {},
	}}
}

// observe updates the table for a message travelling in dir and returns the
// request it answers, if it is an answer to one we saw.
func (t *inFlight) observe(dir wire.Direction, m *wire.Message, ordinal uint64) *Pending {
	switch {
	case m.Kind == wire.Request:
		t.open[dir][m.ID] = &Pending{Dir: dir, ID: m.ID, Method: m.Method, ProgressToken: m.ProgressToken, ordinal: ordinal}
	case m.IsAnswer():
		requests := t.open[dir.Reverse()]
		if p, ok := requests[m.ID]; ok {
			delete(requests, m.ID)
			return p
		}
	}
	return nil
}

func (t *inFlight) count() int {
	return len(t.open[wire.ToServer]) + len(t.open[wire.ToClient])
}

// sent lists the open requests that travelled in dir, oldest first, so that a
// seeded choice among them is stable.
func (t *inFlight) sent(dir wire.Direction) []*Pending {
	out := make([]*Pending, 0, len(t.open[dir]))
	for _, p := range t.open[dir] {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ordinal < out[j].ordinal })
	return out
}
