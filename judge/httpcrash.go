package judge

import (
	"fmt"
	"html"
	"regexp"
	"strings"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The HTTP crash check: a server's 5xx answer whose body carries a crash
// signature (a traceback, a panic, a Node.js error stack) is an exception
// that escaped its handler to the HTTP layer: the request got no JSON-RPC
// answer, and, for a server mcpchaos did not start, the body is the only
// place the crash shows. Web frameworks in debug mode write it there
// (Starlette as text to a client that does not ask for HTML, Express as an
// HTML page). Statuses a fault injected are not the server's.

type httpCrash struct {
	hit crashHit
	// words say what the signature is, in the finding's message.
	words  string
	status int
	what   posted
	count  int
	ev     reports.Evidence
}

type httpCrashes struct {
	// sent says, per exchange, what the client (or a fault) POSTed on it,
	// for the finding's words; only the latest exchanges are kept, since a
	// body follows its request at once.
	sent  map[int64]posted
	order []int64

	sigs    map[string]*httpCrash
	sigList []string
}

type posted struct {
	words   string
	request bool
}

// posted notes the message a POST carried toward the server.
func (h *httpCrashes) posted(e *wire.Event) {
	if e.Exchange == 0 {
		return
	}
	if h.sent == nil {
		h.sent = map[int64]posted{}
	}
	if len(h.order) >= maxSuspects {
		delete(h.sent, h.order[0])
		h.order = h.order[1:]
	}
	p := posted{words: "a message", request: e.Kind == wire.Request.String()}
	switch {
	case e.Method != "":
		p.words = "a " + e.Method + " " + e.Kind
	case e.Kind != "":
		p.words = "a " + e.Kind
	}
	if e.Fault != "" {
		p.words += " (injected by fault " + e.Fault + ")"
	}
	h.sent[e.Exchange] = p
	h.order = append(h.order, e.Exchange)
}

// body scans a 5xx body for a crash signature.
func (h *httpCrashes) body(e *wire.Event) {
	var first *crashHit
	sc := stderrScanner{emit: func(c crashHit) bool {
		if first == nil {
			first = &c
		}
		return true
	}}
	lines := strings.Split(bodyText(stderrText(e)), "\n")
	for _, line := range lines {
		sc.add(e.Seq, e.T, line)
	}
	sc.flush()
	words := ""
	if first != nil {
		words = sigWords(*first)
	} else if first = jsStack(e, lines); first != nil {
		words = "a Node.js error stack: " + first.text
	} else {
		return
	}
	if c := h.sigs[first.sig]; c != nil {
		c.count++
		return
	}
	if h.sigs == nil {
		h.sigs = map[string]*httpCrash{}
	}
	if len(h.sigs) >= maxSignatures {
		return
	}
	what, ok := h.sent[e.Exchange]
	if !ok {
		what = posted{words: "an HTTP request"}
	}
	ev := first.excerpt.evidence()
	ev.Type = e.Type
	h.sigs[first.sig] = &httpCrash{hit: *first, words: words, status: e.Status, what: what, count: 1, ev: ev}
	h.sigList = append(h.sigList, first.sig)
}

func (h *httpCrashes) findings() []reports.Finding {
	var fs []reports.Finding
	for _, sig := range h.sigList {
		c := h.sigs[sig]
		unanswered := ""
		if c.what.request {
			unanswered = ", and the request got no JSON-RPC answer"
		}
		f := reports.NewFinding(reports.RuleCrashHTTPStatus, fmt.Sprintf("the server answered %s with HTTP %d whose body carries %s%s: an exception escaped its handler to the HTTP layer%s",
			c.what.words, c.status, c.words, timesWords(c.count), unanswered), []reports.Evidence{c.ev})
		f.Signature = sig
		fs = append(fs, f)
	}
	return fs
}

var (
	htmlBreak = regexp.MustCompile(`(?i)<br\s*/?>|</?(p|div|pre|li|tr|h[1-6])\b[^>]*>`)
	htmlTag   = regexp.MustCompile(`<[^>]*>`)
)

// bodyText is an error page's text: an HTML page (Express's development
// error handler) has its line breaks restored and its tags and entities
// undone, so that its stack reads as the runtime printed it.
func bodyText(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	s = htmlBreak.ReplaceAllString(s, "\n")
	s = htmlTag.ReplaceAllString(s, "")
	return strings.ReplaceAll(html.UnescapeString(s), "\u00a0", " ")
}

// jsStack finds an error's stack as a Node.js server's error handler
// writes it into a body (an error line, then "    at ..." lines): on stderr
// a crash shows as the runtime's uncaught-exception report instead, which
// the stderr scanner reads.
func jsStack(e *wire.Event, lines []string) *crashHit {
	for i := 0; i+1 < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		m := nodeErrorLine.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "at ") {
			continue
		}
		x := newExcerpt(e.Seq, e.T)
		for _, l := range lines[i:min(len(lines), i+maxStderrLines)] {
			x.add(l)
		}
		return &crashHit{sig: "node:" + m[1], text: line, seq: e.Seq, t: e.T, excerpt: x}
	}
	return nil
}
