package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The checks of a session the server no longer has (MCP 2025-11-25,
// Transports › Streamable HTTP › Session Management): the server "MUST
// respond to requests containing that session ID with HTTP 404 Not Found",
// and a client that receives 404 for a request carrying its session id
// "MUST start a new session by sending a new InitializeRequest without a
// session ID attached".
//
// The server's side is read from the requests forget-session sent on under
// an id the server never issued. The MUST is written for a session the
// server terminated, which an id it never issued is not, and 400 is what
// the specification gives a request without an id: so answering such an
// id with anything but 404 is a warning, not an error. It matters because
// a server cannot tell an id it never issued from one it issued and lost
// when it restarted, and there the MUST applies: whatever status it gives
// the one it gives the other, and only on 404 does a client start over.
//
// The client's side is read from any 404 that answered a POST carrying its
// session id (the server's, after forget-session or end-session, or one a
// fault wrote in its place): a client that retries under the dead id,
// and again once that retry too was answered 404, is retrying without
// bound; one that neither starts a new session nor retries, but fails and
// exits, is a warning.

// maxForgedShown bounds the statuses a finding lists.
const maxForgedShown = 4

// forgottenSessions is what the server answered the requests sent on under
// a forged id.
type forgottenSessions struct {
	// n404 counts the 404s; served the 2xx; refused the other statuses,
	// by status, in the order first seen.
	n404     int
	served   int
	servedEv []reports.Evidence
	refused  []refusal
	// fault is the first forged exchange answered, for the finding.
	fault *forged
}

// forged is a request sent on under an id the server never issued: the
// rewrite's evidence, the forged id, the client's own and the fault.
type forged struct {
	ev                reports.Evidence
	id, client, label string
}

type refusal struct {
	status int
	n      int
	ev     reports.Evidence
	what   string
}

// status notes the server's status for exchange x.
func (f *forgottenSessions) status(x *httpExchange, e *wire.Event) {
	if x.forged == nil || x.method != "POST" {
		// GET and DELETE may be answered 405 whatever the session: a
		// server need not offer a stream, nor let clients end sessions.
		return
	}
	if f.fault == nil {
		f.fault = x.forged
	}
	switch {
	case e.Status == 404:
		f.n404++
	case e.Status >= 200 && e.Status < 300:
		f.served++
		if len(f.servedEv) < 2 {
			f.servedEv = append(f.servedEv, evidenceOf(e))
		}
	default:
		if i := slices.IndexFunc(f.refused, func(r refusal) bool { return r.status == e.Status }); i >= 0 {
			f.refused[i].n++
			return
		}
		if len(f.refused) < maxForgedShown {
			f.refused = append(f.refused, refusal{status: e.Status, n: 1, ev: evidenceOf(e), what: x.what()})
			x.refusal = len(f.refused)
		}
	}
}

// body notes the body of an answer to exchange x: for the first of a
// status the server refused a forged id with, it is what the server said,
// which the finding shows rather than the bare head.
func (f *forgottenSessions) body(x *httpExchange, e *wire.Event) {
	if x.refusal > 0 && (e.Raw != "" || e.RawBase64 != "") {
		ev := evidenceOf(e)
		ev.Excerpt = fmt.Sprintf("HTTP %d: %s", e.Status, frameExcerpt(e))
		f.refused[x.refusal-1].ev = ev
		x.refusal = 0
	}
}

// what names what the exchange POSTed.
func (x *httpExchange) what() string {
	switch {
	case x.rpc == "":
		return "a POST"
	case x.request:
		return fmt.Sprintf("a %s request (id %s)", x.rpc, x.id)
	default:
		return "a " + x.rpc + " " + "message"
	}
}

// findings judges the server: statuses other than 404 for an id it never
// issued are a warning; serving it is a note.
func (f *forgottenSessions) findings(j *Judger) []reports.Finding {
	if f.served > 0 {
		j.notes.add(fmt.Sprintf("the server served %d %s whose Mcp-Session-Id it never issued (forget-session): it keeps no session it could forget, "+
			"or checks no more than an id's form (mcp-go's default session manager), so a restart would not be noticed by its clients and no 404 could come",
			f.served, words.Plural(f.served, "POST", "POSTs")))
	}
	if len(f.refused) == 0 {
		return nil
	}
	var statuses []string
	n := 0
	ev := []reports.Evidence{f.fault.ev}
	for _, r := range f.refused {
		n += r.n
		ev = append(ev, r.ev)
		if len(f.refused) > 1 {
			statuses = append(statuses, fmt.Sprintf("%d (%d)", r.status, r.n))
		} else {
			statuses = append(statuses, fmt.Sprint(r.status))
		}
	}
	msg := fmt.Sprintf("the server answered %d %s whose Mcp-Session-Id it never issued with %s, not 404; the first, %s, went on under %s in place of the client's %s (fault %s). "+
		"Only 404 makes a client start a new session, and a server that answers so an id it never issued answers so its own sessions once a restart has lost them, where the specification wants 404",
		n, words.Plural(n, "POST", "POSTs"), strings.Join(statuses, ", "), f.refused[0].what,
		words.Cut(f.fault.id, 40), words.Cut(f.fault.client, 40), f.fault.label)
	if f.n404 > 0 {
		msg += fmt.Sprintf(" (%d other %s answered 404)", f.n404, words.Plural(f.n404, "was", "were"))
	}
	return []reports.Finding{reports.NewFinding(reports.RuleUnknownSessionNot404, msg, ev)}
}

// clientUntold says, for a client under forget-session, why the scenario
// could not judge it: the server never told it, with 404, that its
// session was gone.
func (f *forgottenSessions) clientUntold() string {
	if f.fault == nil || f.n404 > 0 {
		return ""
	}
	var what []string
	if f.served > 0 {
		what = append(what, fmt.Sprintf("served %d", f.served))
	}
	for _, r := range f.refused {
		what = append(what, fmt.Sprintf("answered %d with %d", r.n, r.status))
	}
	return "the server was shown an Mcp-Session-Id it never issued (forget-session), and of those requests it " + strings.Join(what, " and ") +
		", never with 404: the client was not told its session was gone, so whether it starts a new one was not judged"
}

// deadSessions follows the sessions a 404 told the client were gone.
type deadSessions struct {
	dead  map[string]*deadSession
	order []string
}

type deadSession struct {
	id string
	// told is the first 404, and toldWhat the request it answered;
	// toldDepth the greatest depth of a request answered 404.
	told      reports.Evidence
	toldWhat  string
	toldDepth int
	// retries counts the client's requests under the dead id that began
	// after a 404 to it, the first and the last; depth is the greatest
	// depth among them.
	retries     int
	depth       int
	first, last reports.Evidence
	// renewed is the client's first initialize without a session id
	// after the 404.
	renewed *reports.Evidence
}

// maxDead bounds the dead sessions followed.
const maxDead = 16

// status notes a 404 to a request the client POSTed under its session.
func (d *deadSessions) status(x *httpExchange, e *wire.Event) {
	if e.Status != 404 || x.method != "POST" || x.session == "" || x.ours || !x.request {
		return
	}
	s := d.dead[x.session]
	if s == nil {
		if len(d.order) >= maxDead {
			return
		}
		if d.dead == nil {
			d.dead = map[string]*deadSession{}
		}
		s = &deadSession{id: x.session, told: evidenceOf(e), toldWhat: x.what(), toldDepth: x.depth}
		d.dead[x.session] = s
		d.order = append(d.order, x.session)
		return
	}
	s.toldDepth = max(s.toldDepth, x.depth)
}

// began notes a message the client POSTed on exchange x, once the message
// is known: a request under a dead id is a retry, one level deeper than the
// deepest 404 it had been told; an initialize without an id starts anew.
func (d *deadSessions) began(x *httpExchange, e *wire.Event) {
	if x.ours || e.Kind != "request" {
		return
	}
	if x.session == "" && e.Method == "initialize" {
		for _, id := range d.order {
			if s := d.dead[id]; s.renewed == nil {
				ev := evidenceOf(e)
				s.renewed = &ev
			}
		}
		return
	}
	s := d.dead[x.session]
	if s == nil || s.renewed != nil {
		return
	}
	x.depth = s.toldDepth + 1
	s.retries++
	s.last = evidenceOf(e)
	if s.retries == 1 {
		s.first = s.last
	}
	s.depth = max(s.depth, x.depth)
}

// findings judges the client: retries under a dead id past the first are
// an error; a client that ended on its own without a new session, a
// warning. exit is the client's exit when it exited on its own, before
// its deadline (nil otherwise), and exited how, in words.
func (d *deadSessions) findings(exit *reports.Evidence, exited string) []reports.Finding {
	var fs []reports.Finding
	for _, id := range d.order {
		s := d.dead[id]
		head := fmt.Sprintf("the server answered %s under session %s with 404 (at %s): the session is gone, and the client must start a new one with an initialize without Mcp-Session-Id",
			s.toldWhat, words.Cut(id, 40), words.Duration(s.told.TUS))
		switch {
		case s.depth >= 2:
			then := "; it never started a new session"
			if s.renewed != nil {
				then = fmt.Sprintf("; it started a new session only at %s", words.Duration(s.renewed.TUS))
			}
			fs = append(fs, reports.NewFinding(reports.RuleDeadSessionReused, fmt.Sprintf(
				"%s; instead it sent %d more %s under the dead id, again after the 404 to a retry (the last at %s)%s",
				head, s.retries, words.Plural(s.retries, "request", "requests"), words.Duration(s.last.TUS), then),
				[]reports.Evidence{s.told, s.first, s.last}))
		case s.renewed == nil && exit != nil:
			fs = append(fs, reports.NewFinding(reports.RuleNoNewSession, fmt.Sprintf(
				"%s; it did not, and %s: its call failed where a new session would have served it",
				head, exited),
				[]reports.Evidence{s.told, *exit}))
		}
	}
	return fs
}

// clientSessionFindings judges how the client took a 404 to its session;
// stuck says it did not end on its own by its deadline, which the hang
// finding tells.
func (j *Judger) clientSessionFindings(stuck bool) []reports.Finding {
	if why := j.se.fg.clientUntold(); why != "" {
		j.unknown.add(why)
	}
	var exit *reports.Evidence
	if !stuck {
		exit = j.pc.exit
	}
	return j.se.cd.findings(exit, "it "+j.pc.exitWords())
}
