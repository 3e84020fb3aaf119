package judge

import (
	"cmp"
	"fmt"
	"net"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Rebinding judges what a local HTTP server answered the requests of a page
// of a foreign site (fault foreign-origin, wire.EventForeign) and the
// client's own requests sent on with a forged Host or Origin (fault
// forge-origin): each must be refused before any method runs, a foreign
// or null Origin with 403. A finding names the header the server let
// through, so that its author knows which check is missing.
var Rebinding = &Checker{
	Name:  "rebinding",
	Doc:   "a request with a foreign Host or Origin (DNS rebinding) served, or an invalid Origin refused without 403",
	Reads: []string{wire.EventForeign, wire.EventListening, wire.EventHTTP, wire.EventReceived},
	Rules: []string{reports.RuleRebindingServed, reports.RuleForeignOriginServed, reports.RuleNullOriginServed, reports.RuleForeignHostServed, reports.RuleForeignOriginNot403, reports.RuleListensEverywhere},
	New:   func() Check { return &rebinding{} },
}

type rebinding struct {
	found []reports.Finding
	seen  map[string]bool // rule and forgery, once each
	// foreign says a foreign page's requests were sent: the session is
	// the rebinding scenario's, which judges where the server listens.
	foreign bool
	// everywhere is the listening event whose addresses include every
	// interface, if one did.
	everywhere *wire.Event
	// forged holds, by exchange, the client's own requests fault
	// forge-origin sent on forged and whose answer has not come yet: the
	// forge event, with the status and session id of the answer's head.
	forged map[int64]*wire.Event
}

// maxForged bounds the client's forged requests awaiting their answers.
const maxForged = 64

// forgery is what the rebinding checker knows of one request of fault
// foreign-origin: the rule it breaks when served, what it sent and the
// check a served one shows missing (for messages), and whether it sent
// an invalid Origin with the true Host, which the specification answers
// with 403.
type forgery struct {
	rule, said, missing string
	badOrigin           bool
}

var forgeries = map[string]forgery{
	"rebinding": {reports.RuleRebindingServed, "with a foreign Host and a foreign Origin, as a page of another site sends it once DNS rebinding has pointed the site's name at this machine",
		"it checks neither Host nor Origin: any web page the user opens can use its tools", false},
	"origin": {reports.RuleForeignOriginServed, "with its own Host but a foreign Origin, as a page of another site sends it",
		"it does not check Origin (the specification's MUST)", true},
	"null-origin": {reports.RuleNullOriginServed, "with Origin: null, as a sandboxed frame or a local file sends it",
		"it takes Origin: null for a trusted one", true},
	"host": {reports.RuleForeignHostServed, "with a foreign Host and no Origin", "it does not check Host", false},
}

// servedForeign says the server served a request of the proxy's own
// (wire.EventForeign): a 2xx with a result, or a session issued.
func servedForeign(e *wire.Event) bool {
	return e.Status >= 200 && e.Status < 300 && (e.Kind == "response" || e.MCPSession != "")
}

func (c *rebinding) Event(e *wire.Event) {
	switch e.Type {
	case wire.EventListening:
		if c.everywhere == nil && listensEverywhere(e.Detail) {
			cp := *e
			c.everywhere = &cp
		}
	case wire.EventForeign:
		c.foreign = true
		c.judge(e, e.Method)
	case wire.EventHTTP:
		c.ownHTTP(e)
	case wire.EventReceived:
		if p := c.forged[e.Exchange]; p != nil && e.Dir == wire.ToClient.String() && (e.Kind == "response" || e.Kind == "error") {
			// The answer the forged request's exchange carried.
			delete(c.forged, e.Exchange)
			p.Kind = e.Kind
			c.judgeOwn(p)
		}
	}
}

// ownHTTP follows the client's own requests fault forge-origin forged:
// the forge event, then the head of the server's answer; a refusal is
// judged at its head, a request served at its answer.
func (c *rebinding) ownHTTP(e *wire.Event) {
	if e.Action == "forge-origin" {
		if _, ok := forgeries[e.Forged]; ok && len(c.forged) < maxForged {
			if c.forged == nil {
				c.forged = map[int64]*wire.Event{}
			}
			cp := *e
			c.forged[e.Exchange] = &cp
		}
		return
	}
	p := c.forged[e.Exchange]
	if p == nil || e.Status == 0 || e.ByUs {
		return
	}
	p.Status = e.Status
	if p.Method == "initialize" {
		// A session issued; other answers may name the client's own.
		p.MCPSession = e.MCPSession
	}
	if e.Status >= 300 || p.Kind != "request" {
		// Refused, or a notification or answer the server took: nothing
		// more of this exchange says whether it was served.
		delete(c.forged, e.Exchange)
		c.judgeOwn(p)
	}
}

// judgeOwn judges the client's own request sent forged, as its Kind the
// answer's ("response", "error") or the message's when none is owed.
func (c *rebinding) judgeOwn(p *wire.Event) {
	if p.Kind == "notification" && p.Status >= 200 && p.Status < 300 {
		p.Kind = "response" // accepted: the server acted on it
	}
	c.judge(p, "the client's "+cmp.Or(p.Method, "message"))
}

// judge judges what the server answered a forged request (e: the status,
// the answer's kind and a session issued), named what in the finding.
func (c *rebinding) judge(e *wire.Event, what string) {
	f, ok := forgeries[e.Forged]
	if !ok {
		return
	}
	switch {
	case servedForeign(e):
		issued := ""
		if e.MCPSession != "" {
			issued = fmt.Sprintf(" and issued session %s", e.MCPSession)
		}
		c.add(f.rule, e, fmt.Sprintf("the server served %s (%s) sent %s: it answered %d%s; %s",
			what, e.Detail, f.said, e.Status, issued, f.missing))
	case f.badOrigin && e.Status != 403 && e.Status != 0:
		how := fmt.Sprintf("HTTP %d", e.Status)
		if e.Status < 300 {
			how = fmt.Sprintf("HTTP %d and a JSON-RPC error", e.Status)
		}
		c.add(reports.RuleForeignOriginNot403, e, fmt.Sprintf("the server refused %s (%s) sent %s with %s, not the 403 Forbidden the specification names for an invalid Origin",
			what, e.Detail, f.said, how))
	}
}

func (c *rebinding) add(rule string, e *wire.Event, message string) {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	key := rule + "\x00" + e.Forged
	if c.seen[key] {
		return
	}
	c.seen[key] = true
	fd := reports.NewFinding(rule, words.Cut(message, 600), []reports.Evidence{evidenceOf(e)})
	fd.Request = &reports.Request{ID: e.ID, Method: e.Method}
	c.found = append(c.found, fd)
}

func (c *rebinding) Findings() []reports.Finding {
	if c.foreign && c.everywhere != nil {
		fd := reports.NewFinding(reports.RuleListensEverywhere, fmt.Sprintf("the server listens on %s: every interface, not only loopback, so any machine of the user's network reaches it; a local server SHOULD bind only to localhost (127.0.0.1)",
			c.everywhere.Detail), []reports.Evidence{evidenceOf(c.everywhere)})
		return append(c.found, fd)
	}
	return c.found
}

// listensEverywhere reports whether one of addrs (host:port, comma
// separated) is an unspecified address: every interface.
func listensEverywhere(addrs string) bool {
	for _, a := range strings.Split(addrs, ", ") {
		host, _, err := net.SplitHostPort(a)
		if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsUnspecified() {
			return true
		}
	}
	return false
}
