package faults

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

// idCollision sends a request on under the id of another request that
// travels the same way and is still unanswered: a sender that reuses an id in
// flight (DESIGN.md bug class 8). A receiver that keys its requests by id
// loses one of them, or cross-wires the answers.
//
// The receiver then owes two answers with the same id, and nothing in an
// answer says which request it answers. The rule: the first answer with the
// id goes back under that id (to the request that had it first), the second
// goes back under the triggering request's own id. A receiver that finishes
// the two out of order therefore gives each sender request the other's
// result; the transcript holds what each peer got. A receiver that answers
// only once leaves the other request open, and the judge reports it as
// usual; the second answer is owed, never a duplicate. Over HTTP each
// answer comes on the exchange of its own request, and goes back to that
// request (Plan.ReceiveOn).
//
// Only a request the receiver holds lends its id: one it accepted and has
// not answered. Over HTTP a request refused with an error status (a
// stateful server's 400 or 404 to the probe's server/discover) was never
// held, and leaves the requests in flight (Plan.Refused). The collision
// lands only if the lender is still held when the borrower reaches the
// receiver: a lender answered before the borrower went on, or refused by
// the server after all, makes the firing one that did not land (landing.go),
// recorded as such, and a later request can still get the fault.
var idCollisionFamily = &Family{
	Name:     "id-collision",
	InFlight: true,
	Doc: "send the triggering request on under the id of another request in flight the same way, so the receiver holds two requests with one id; " +
		"the first answer with that id goes back to the request that had it first, the second to the triggering request " +
		"(default on=c2s:request:tools/call); only a request the receiver holds lends its id (accepted and unanswered: over HTTP, one refused with a 4xx never does), and it is skipped while none is in flight; " +
		"a lender answered or refused before the request reaches the receiver makes the firing one that did not land",
	Phase: Before,
	Params: []Param{
		{Name: "with", Type: TypeChoice, Default: "oldest", Choices: []string{"oldest", "random"},
			Doc: "which request in flight lends its id: the oldest, or one drawn from the seed"},
	},
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		return idCollision{with: v.String("with")}, nil
	},
	Example: "id-collision:on=c2s:request:tools/call,with=random",
	On:      "c2s:request:tools/call",
}

type idCollision struct{ with string }

func (k idCollision) Fire(c *FireContext) Effect {
	m := c.Message
	own := c.own()
	if own == nil {
		return Effect{Skipped: true, Detail: "skipped: not a request in flight, so there is no id to rewrite"}
	}
	if why := c.rewritten(); why != "" {
		return Effect{Skipped: true, Detail: why}
	}
	var others []*Pending
	for _, p := range c.Sent(c.Dir) {
		if p != own && p.wireID() != m.ID {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: no other request the %s sent is in flight to collide with", sender(c.Dir))}
	}
	first := others[0]
	if k.with == "random" {
		first = others[c.Draws.Intn(len(others))]
	}
	id := first.wireID()
	raw, ok := wire.ReplaceID(m.Raw, id)
	if !ok {
		return Effect{Skipped: true, Detail: "skipped: the request's id could not be located"}
	}
	c.rewriteID(id, first)
	c.needsHeld(first, fmt.Sprintf("the %s request (id %s) whose id it took", first.Method, first.ID))
	return Effect{Rewrite: raw, Detail: fmt.Sprintf("send the request on with id %s (was %s), the id of the %s request still in flight; "+
		"the first answer with id %s goes back as %s, the next as %s", id, m.ID, first.Method, id, first.ID, m.ID)}
}
