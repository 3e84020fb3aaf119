package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Credentials judges what an HTTP server answered the requests of fault
// credentials (wire.EventForeign): a server that refused the request
// without credentials wants them, and must refuse the malformed and the
// made-up ones too, and its own session used without them; each refusal
// is a 401 with a WWW-Authenticate challenge. A server that served the
// request without credentials wants none: nothing else is held against it.
var Credentials = &Checker{
	Name:  "credentials",
	Doc:   "a server that wants credentials serving a request with malformed or made-up ones, or a session without them; a refusal that is not 401 with a challenge",
	Reads: []string{wire.EventForeign},
	Rules: []string{reports.RuleCredentialsServed, reports.RuleSessionWithoutCredentials, reports.RuleUnauthorizedChallenge},
	New:   func() Check { return &credentialChecks{} },
}

type credentialChecks struct {
	events []credentialAnswer
	// wants is set once the request without credentials was refused.
	wants, sawNone bool
}

type credentialAnswer struct {
	forged, method, detail, id, challenge string
	status                                int
	served                                bool
	ev                                    reports.Evidence
}

// credentialForged says, of each request of fault credentials, what it sent.
var credentialForged = map[string]string{
	"none":            "no credentials",
	"malformed":       "a malformed credential",
	"made-up":         "a made-up credential of the right form",
	"session-none":    "no credentials, in the client's session",
	"session-made-up": "a made-up credential, in the client's session",
}

func (c *credentialChecks) Event(e *wire.Event) {
	if credentialForged[e.Forged] == "" || e.Status == 0 || len(c.events) >= 16 {
		return
	}
	served := servedForeign(e)
	if e.Forged == "none" {
		c.sawNone = true
		c.wants = e.Status >= 400 && e.Status < 500
	}
	c.events = append(c.events, credentialAnswer{forged: e.Forged, method: e.Method, detail: e.Detail, id: e.ID,
		challenge: e.Challenge, status: e.Status, served: served, ev: evidenceOf(e)})
}

func (c *credentialChecks) Findings() []reports.Finding {
	if !c.sawNone || !c.wants {
		return nil // a server that wants no credentials
	}
	madeUpServed := slices.ContainsFunc(c.events, func(a credentialAnswer) bool { return a.forged == "made-up" && a.served })
	var out []reports.Finding
	challenged := false
	for _, a := range c.events {
		var fd reports.Finding
		switch {
		case a.served && a.forged == "session-made-up" && madeUpServed:
			continue // the made-up credential opens anything: said once
		case a.served && strings.HasPrefix(a.forged, "session-"):
			fd = reports.NewFinding(reports.RuleSessionWithoutCredentials, fmt.Sprintf("the server refused a request without credentials, and then served %s in a session it had opened for the client's credentials (%s): answered %d; whoever has the session id can use the session as its user",
				a.method, a.detail, a.status), []reports.Evidence{a.ev})
		case a.served:
			fd = reports.NewFinding(reports.RuleCredentialsServed, fmt.Sprintf("the server refused a request without credentials, and then served %s with %s (%s): answered %d; it takes any credential of the right form",
				a.method, credentialForged[a.forged], a.detail, a.status), []reports.Evidence{a.ev})
		case !challenged && (a.status != 401 || a.challenge == ""):
			challenged = true
			what := fmt.Sprintf("HTTP %d", a.status)
			if a.status == 401 {
				what = "401 without a WWW-Authenticate challenge"
			}
			fd = reports.NewFinding(reports.RuleUnauthorizedChallenge, fmt.Sprintf("the server refused %s with %s (%s) with %s: a request without valid credentials gets 401 Unauthorized and a WWW-Authenticate challenge, which tells a client how to authorize",
				a.method, credentialForged[a.forged], a.detail, what), []reports.Evidence{a.ev})
		default:
			continue
		}
		fd.Request = &reports.Request{ID: a.id, Method: a.method}
		out = append(out, fd)
	}
	return out
}
