package faults

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mcpchaos/mcpchaos/wire"
)

// cancel sends notifications/cancelled for a request in flight, as its
// sender would. Fired just before the request's response is forwarded
// (on=s2c:response:...,position=before) it is the race the spec describes:
// the cancellation reaches the server after it answered, and the answer
// still reaches the client. A receiver may leave a cancelled request
// unanswered, and may still answer it; it must not fall over either way.
var cancelFamily = &Family{
	Name:     "cancel",
	InFlight: true,
	Doc:      "send notifications/cancelled for a request in flight toward the peer that received it (default on=c2s:request:tools/call: the tool call just forwarded to the server); with on=s2c:response:tools/call,position=before it cancels the call just before its response reaches the client; skipped when the request is not in flight",
	Phase:    After,
	On:       "c2s:request:tools/call",
	Params: []Param{
		{Name: "target", Type: TypeChoice, Choices: []string{"trigger", "oldest", "random"}, Default: "trigger", Doc: "which request: the triggering request (or the one the triggering answer answers), the oldest in flight, or one in flight drawn from the seed"},
	},
	New: func(v Values) (Action, error) {
		return cancel{target: v.String("target")}, nil
	},
	Example: "cancel:on=s2c:response:tools/call,position=before",
}

// cancelReason is the reason every injected cancellation gives.
const cancelReason = "mcpchaos fault cancel"

type cancel struct{ target string }

func (k cancel) Fire(c *FireContext) Effect {
	p, why := k.pick(c)
	if p == nil {
		return Effect{Skipped: true, Detail: "skipped: " + why}
	}
	params := fmt.Sprintf(`{"requestId":%s,"reason":%q}`, p.ID, cancelReason)
	return Effect{
		Inject: []Injection{{Dir: p.Dir, Raw: notification("notifications/cancelled", func(int) string { return params }, 0)}},
		Detail: fmt.Sprintf("cancel %s (id %s) toward the %s", p.Method, p.ID, receiver(p.Dir)),
	}
}

// pick chooses the request to cancel, or says why there is none.
func (k cancel) pick(c *FireContext) (*Pending, string) {
	if k.target == "trigger" {
		return triggerRequest(c)
	}
	// The triggering request, fired on before it is forwarded, has not
	// reached its receiver: it is not in flight yet.
	notYet := c.Phase == Before && c.Message.Kind == wire.Request
	var open []*Pending
	for _, p := range slices.Concat(c.Sent(wire.ToServer), c.Sent(wire.ToClient)) {
		if cancellable(p) && !(notYet && p.Dir == c.Dir && p.ID == c.Message.ID) {
			open = append(open, p)
		}
	}
	if len(open) == 0 {
		return nil, "no request is in flight (initialize, which must not be cancelled, and a request not yet forwarded do not count)"
	}
	slices.SortFunc(open, func(a, b *Pending) int { return cmp.Compare(a.ordinal, b.ordinal) })
	if k.target == "oldest" {
		return open[0], ""
	}
	return open[c.Draws.Intn(len(open))], ""
}

// triggerRequest is the request the triggering message is, once forwarded,
// or the one it answers, before the answer is forwarded: the two moments
// the request is in flight for both of its peers.
func triggerRequest(c *FireContext) (*Pending, string) {
	m := c.Message
	switch {
	case m.Kind == wire.Request && c.Phase == Before:
		return nil, fmt.Sprintf("%s (id %s) has not reached the %s yet (fire with position=after)", m.Method, m.ID, receiver(c.Dir))
	case m.Kind == wire.Request:
		for _, p := range c.Sent(c.Dir) {
			if p.ID == m.ID && p.Method == m.Method {
				if !cancellable(p) {
					return nil, "initialize must not be cancelled"
				}
				return p, ""
			}
		}
		return nil, fmt.Sprintf("%s (id %s) is answered already", m.Method, m.ID)
	case m.IsAnswer() && c.Answers != nil && c.Phase == Before:
		if !cancellable(c.Answers) {
			return nil, "initialize must not be cancelled"
		}
		return c.Answers, ""
	case m.IsAnswer() && c.Answers != nil:
		return nil, fmt.Sprintf("the answer to %s (id %s) reached the %s already (fire with position=before)", c.Answers.Method, c.Answers.ID, receiver(c.Dir))
	}
	return nil, "the triggering message is not a request in flight nor an answer to one"
}

// cancellable excludes initialize, which the spec says must not be cancelled.
func cancellable(p *Pending) bool { return p.Method != "initialize" }
