package faults

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

// A fault fires when its trigger says, and lands when its effect meets the
// moment it was made for. Most faults land as they fire: a dropped message
// is dropped. A fault whose effect needs the peer to still hold a request
// when the effect reaches it (an id collision needs the request whose id
// it borrows unanswered when the borrower arrives) can fire and yet miss:
// the request was answered before the borrower went on, or over HTTP the
// server had refused it with an error status and never held it. Such a
// firing is recorded as a fault event whose detail starts with
// wire.NotLanded, the judge takes a scenario whose fault never landed for
// one that tested nothing (indeterminate, never a pass), and the firing
// does not use up times=, so a later message can still get the fault.
//
// Whether a firing landed is told from what the plan heard, and the record
// must tell the same story: a transcript where the lender's answer came
// (received) before the borrower went on (forwarded) cannot hold a landed
// collision. So a transport tells the plan of a message from the receiver
// (ReceiveOn) before it records it received, and tells it of the
// triggering message's delivery (Delivered) after it records it
// forwarded: a firing the plan takes for landed then has the lender's
// answer recorded after the borrower's forwarding. (The HTTP proxy once
// recorded an answer, then told the plan; a borrower forwarded in between
// counted as landed with its lender's answer already on record.)

// landing is one firing that must still land: its effect needs need held
// by its receiver when the triggering message reaches it.
type landing struct {
	fault int // the fault's index in the plan
	label string
	dir   wire.Direction // the triggering message's, whose goroutine delivers it
	need  *Pending
	// what names need in the words of a miss: "the tools/call request (id
	// 3) whose id it took".
	what string
	// of is the seq of the triggering message's received event, once it
	// was delivered; delivered says it was.
	of        int64
	delivered bool
	done      bool // missed (or settled otherwise): nothing more to say
}

// Miss is a firing that did not land: the fault acted, but by the time its
// effect reached the peer what it needed was gone. The transport records
// it as a fault event of Label's fault with Detail (which starts with
// wire.NotLanded) and Of, the triggering message's received event when
// known.
type Miss struct {
	Fault  *Fault
	Label  string
	Of     int64
	Detail string
}

// needsHeld says that the firing lands only if the receiver of the
// requests travelling in p.Dir still holds p when the triggering message
// reaches it (see Delivered and Refused); what names p in words.
func (c *FireContext) needsHeld(p *Pending, what string) {
	if c.step == nil || p == nil {
		return
	}
	l := &landing{fault: c.fault, label: c.label, dir: c.Dir, need: p, what: what}
	c.step.landings = append(c.step.landings, l)
	p.landings = append(p.landings, l)
}

// Delivered tells the plan that the message of s, as the faults that fired
// on it changed it, is being written on to its receiver now; seq is its
// received event, for the record. It returns the firings on s that cannot
// land because what they needed is gone already: the request an id
// collision borrowed from was answered, or refused, before the borrower
// went on. The transport records each (see Miss). Only the goroutine that
// received s may call it, and only for a message it forwards.
func (p *Plan) Delivered(s *Step, seq int64) []Miss {
	if len(s.landings) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Miss
	for _, l := range s.landings {
		if l.done || l.delivered {
			continue
		}
		l.of = seq
		why := ""
		switch n := l.need; {
		case n.refused != "":
			why = fmt.Sprintf("%s was never held by the %s (%s)", l.what, receiver(n.Dir), n.refused)
		case n.answered:
			why = fmt.Sprintf("%s was answered before this request went on to the %s", l.what, receiver(n.Dir))
		case n.closed:
			why = fmt.Sprintf("%s was no longer in flight when this request went on to the %s", l.what, receiver(n.Dir))
		default:
			l.delivered = true
			continue
		}
		out = append(out, p.miss(l, why, true))
	}
	return out
}

// Refused tells the plan that the receiver of the request of s never held
// it: an HTTP client error status (4xx) refused it, or it was never
// delivered (a fault
// withheld it, the proxy answered it itself, the upstream could not be
// reached); why says which, in words. The request leaves the requests in
// flight, so that no fault takes it for one the receiver holds (an id
// collision borrowing its id would collide with nothing), and an answer
// under its id goes back to another request. It returns the firings that
// borrowed it already and so did not land (see Miss).
func (p *Plan) Refused(s *Step, why string) []Miss {
	if s == nil || s.req == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := s.req
	if r.refused != "" || r.answered {
		return nil
	}
	p.inflight.refuse(r, why)
	p.ids.forget(r.Dir, r.wireID(), r.ID)
	var out []Miss
	for _, l := range r.landings {
		// One not yet delivered misses when it is (Delivered).
		if l.done || !l.delivered {
			continue
		}
		out = append(out, p.miss(l, fmt.Sprintf("%s was refused after this request went on (%s): the %s never held the two together", l.what, why, receiver(r.Dir)), false))
	}
	return out
}

// Failed tells the plan that the receiver answered the request of s in a
// way the plan does not read, an HTTP server error status (5xx): it held
// the request until then, and owes it no other answer. The request leaves
// the requests in flight as an answered one does; a firing that needed it
// and went on before the status came landed.
func (p *Plan) Failed(s *Step) {
	if s == nil || s.req == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := s.req
	if r.refused != "" || r.answered {
		return
	}
	if p.inflight.open[r.Dir][r.ID] == r {
		delete(p.inflight.open[r.Dir], r.ID)
	}
	r.closed, r.answered = true, true
	p.ids.forget(r.Dir, r.wireID(), r.ID)
}

// miss settles l as a firing that did not land, and gives its fault back
// the firing, as a skipped one does not use it, so that a later message
// can still get the fault. own says the caller is the goroutine of l's
// direction, which alone keeps a serial plan's count of the faults it
// owns (see Serial); p.mu is held.
func (p *Plan) miss(l *landing, why string, own bool) Miss {
	l.done = true
	owned := p.serial && l.fault < 64 && p.owner[l.fault] != 0
	if st := &p.state[l.fault]; st.fired > 0 && (!owned || own && p.owner[l.fault] == l.dir) {
		st.fired--
	}
	return Miss{Fault: p.faults[l.fault], Label: l.label, Of: l.of, Detail: wire.NotLanded + ": " + why}
}
