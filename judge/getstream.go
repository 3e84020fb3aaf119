package judge

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The GET-stream check, on a client under test over HTTP. A client MAY open
// a GET stream for the server's own messages (notifications and requests
// that relate to no call of its own); once it has, and that stream breaks,
// it SHOULD open it again (with Last-Event-ID, to resume): until it does,
// everything the server sends it outside a call is lost, silently, while
// its calls go on working. The evidence is a fault's cut of the stream and,
// a reconnection delay later, a fault that had a message for the client on
// that stream and found none open (stream=get, skipped).

// reopenBound is how long after a cut a client is given to reopen its GET
// stream: the SDKs wait 1 s by default before reconnecting; a server's
// retry: field, which a client MUST respect, extends it.
const (
	reopenBound = 2_000_000 // µs
	reopenSlack = 1_000_000 // µs past a server's retry
)

type getStreams struct {
	// standalone are the exchanges of the client's GET streams.
	standalone map[int64]bool
	// cut is the latest fault's cut of one, until the client opens another.
	cut *reports.Evidence
	// cutBy is the fault that cut it, retryUS the server's retry: field
	// on the streams so far, in µs.
	cutBy   string
	retryUS int64
	// aimed says a fault aimed at the GET stream acted; missed is the
	// first firing of one that found no GET stream.
	aimed  bool
	missed string
	f      *reports.Finding
}

// http notes an http event of the session.
func (g *getStreams) http(e *wire.Event) {
	switch {
	case e.HTTP != "" && e.Standalone:
		if g.standalone == nil {
			g.standalone = map[int64]bool{}
		}
		if len(g.standalone) < maxCutExchanges {
			g.standalone[e.Exchange] = true
		}
		g.cut, g.cutBy = nil, ""
	case !g.standalone[e.Exchange]:
	case e.Cut != "":
		ev := evidenceOf(e)
		g.cut, g.cutBy = &ev, e.Fault
	case e.Raw != "":
		if r := retryOf(e.Raw); r > g.retryUS {
			g.retryUS = r
		}
	}
}

// retryOf is the retry: field of an event's raw text, in µs, or 0.
func retryOf(raw string) int64 {
	for _, line := range strings.Split(raw, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "retry:"); ok {
			if ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && ms > 0 {
				return ms * 1000
			}
		}
	}
	return 0
}

// fault notes a fault event: one aimed at the GET stream that found none
// open is the evidence that the client had not reopened it.
func (g *getStreams) fault(e *wire.Event) {
	if !aimsAtGET(e.Spec) {
		return
	}
	skipped := strings.HasPrefix(e.Detail, "skipped")
	if !skipped {
		g.aimed = true
		return
	}
	if g.missed == "" {
		g.missed = e.Fault + " " + e.Detail
	}
	c := g.cut
	bound := max(reopenBound, g.retryUS+reopenSlack)
	if g.f != nil || c == nil || e.T-c.TUS < bound {
		return
	}
	f := reports.NewFinding(reports.RuleGetStreamNotReopened, fmt.Sprintf(
		"the client's GET stream, its channel for the server's own messages, was cut by fault %s at %s, and %s later it had not opened another, when the server had a message for it (fault %s found no GET stream to carry it): "+
			"a client whose GET stream broke should open it again (with Last-Event-ID, to resume); until it does, every notification and request the server sends it outside a call is lost",
		g.cutBy, words.Duration(c.TUS), words.Duration(e.T-c.TUS), e.Fault), []reports.Evidence{*c, evidenceOf(e)})
	g.f = &f
}

// aimsAtGET says whether a fault spec points the fault at the client's GET
// stream (stream=get).
func aimsAtGET(spec string) bool {
	_, params, _ := strings.Cut(spec, ":")
	for _, kv := range strings.Split(params, ",") {
		if strings.TrimSpace(kv) == "stream=get" {
			return true
		}
	}
	return false
}

// findings is the GET-stream finding, if any.
func (g *getStreams) findings() []reports.Finding {
	if g.f == nil {
		return nil
	}
	return []reports.Finding{*g.f}
}

// indeterminate says why a scenario whose faults aim at the GET stream
// tested nothing: none of them found one open.
func (g *getStreams) indeterminate() string {
	if g.aimed || g.missed == "" || g.f != nil {
		return ""
	}
	return "no GET stream to act on: none was open when the faults aimed at it fired (a client MAY open one, and a server MAY answer its GET 405) (" + g.missed + ")"
}
