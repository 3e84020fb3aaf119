package judge

import (
	"slices"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// A Checker is one family of rules over a session's events, kept apart from
// the request tracker and the other checks, in the shape of
// golang.org/x/tools/go/analysis: it declares what it reads (the event types
// it is given) and the rules it may cite, and the Judger hands it those
// events of the peer under test in order, then asks for its findings once.
// A new family of rules (hostile input, schema, security) is a Checker of
// its own, not more branches of the tracker.
type Checker struct {
	Name string
	// Doc says what it checks, for docs and tests.
	Doc string
	// Reads are the event types it is given (wire.EventReceived...).
	Reads []string
	// Rules are the rules its findings cite; a test holds it to them.
	Rules []string
	// New starts its check of one session.
	New func() Check
	// Client says it judges a client program under test; the others judge
	// a server.
	Client bool
}

// Check is a Checker at work on one session. It must not keep the events
// it is given (they are reused), only what it needs of them.
type Check interface {
	Event(e *wire.Event)
	Findings() []reports.Finding
}

// Checkers are the families the Judger runs on a session: those of its
// peer under test (Checker.Client).
var Checkers = []*Checker{ToolSchemas, OfficialSchema, ListedItems, InputCost, Rebinding, SessionIDs, Credentials, OfficialSchemaClient}

// running is a Checker's Check in a session.
type running struct {
	c     *Checker
	check Check
}

func startChecks() []running {
	out := make([]running, 0, len(Checkers))
	for _, c := range Checkers {
		out = append(out, running{c, c.New()})
	}
	return out
}

// checkEvent hands e to the checks of the peer under test that read its
// type.
func (j *Judger) checkEvent(e *wire.Event) {
	for _, r := range j.checks {
		if r.c.Client == (j.p == clientPeer) && slices.Contains(r.c.Reads, e.Type) {
			r.check.Event(e)
		}
	}
}

// rewrittenRequest is the id a request travelling in dir went on under,
// when a fault rewrote it on its way (id-collision, id-type, mutate: the
// forwarded event then carries the bytes written). The answers to that id
// cannot be told apart from those of another request under it, nor read
// as the answer to what the sender wrote, so the checks that read answers
// by id leave them alone.
func rewrittenRequest(e *wire.Event, dir string) (string, bool) {
	if e.Type != wire.EventForwarded || e.Dir != dir || e.Kind != "request" || e.ID == "" {
		return "", false
	}
	return e.ID, true
}

func (j *Judger) checkFindings() []reports.Finding {
	var out []reports.Finding
	for _, r := range j.checks {
		if r.c.Client == (j.p == clientPeer) {
			out = append(out, r.check.Findings()...)
		}
	}
	return out
}
