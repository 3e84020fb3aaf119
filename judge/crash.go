package judge

import (
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The crash check: a non-zero exit or a signal we did not send, or a crash
// signature on stderr whichever way the peer exited (a server that logs a
// traceback and exits 0 still crashed). Each distinct signature is one
// finding; a crash the faults explain (EPIPE after we closed the peer's
// output, dying of our signal) is noted, not blamed.

// maxSignatures bounds the distinct signatures kept per session.
const maxSignatures = 32

type crashSig struct {
	hit   crashHit
	count int
	// lastSeq is the stderr event of its last occurrence.
	lastSeq int64
	// uncaught is set when an occurrence did not follow the SDK's word
	// that it caught the exception (crashHit.caughtBy).
	uncaught bool
	// session is the first occurrence that ended a session by the SDK's
	// word (crashHit.sessionCrash), and sessions how many did.
	session  *crashHit
	sessions int
}

type crashes struct {
	scan  stderrScanner
	sigs  map[string]*crashSig
	order []string
	extra int

	// hcSigs are the signatures printed after mcpchaos closed the peer's
	// output (half-close), apart: with its output gone, the peer's exit is
	// what is judged. lastHC is the latest of them before any signal of
	// ours: a runtime prints the exception that ends a process last.
	hcSigs  map[string]*crashSig
	hcOrder []string
	lastHC  *crashHit
}

func (c *crashes) init(j *Judger) {
	c.sigs = map[string]*crashSig{}
	c.hcSigs = map[string]*crashSig{}
	c.scan.emit = func(h crashHit) bool { return c.hit(j, h) }
}

func (c *crashes) stderr(e *wire.Event) {
	c.scan.add(e.Seq, e.T, stderrText(e))
}

// hit files one signature; it returns whether the signature is new, so the
// scanner collects an excerpt only for the first of each.
func (c *crashes) hit(j *Judger, h crashHit) bool {
	pc := &j.pc
	if hc := pc.halfClose; hc != nil && hc.Seq < h.seq {
		return c.halfClosedHit(j, h)
	}
	if s := pc.ladderSignal; s != nil && s.Seq < h.seq {
		j.notes.add(fmt.Sprintf("the %s printed %s after mcpchaos signalled it (%s): not judged as a crash", j.p.name, h.sig, s.Excerpt))
		return false
	}
	if s := pc.ourSignal; s != nil && s.Seq < h.seq && isCancellation(h) {
		// A signal fault asked the peer to stop: the tasks its shutdown
		// cancels raise their cancellation, which a server may log
		// (uvicorn does, for an event stream still open at its graceful
		// shutdown's timeout). That is the stopping, not an exception a
		// bug left unhandled; ClosedResourceError and the like still are.
		j.notes.add(fmt.Sprintf("the %s printed %s after mcpchaos signalled it (%s): its shutdown cancelling a task, not a crash", j.p.name, h.sig, s.Excerpt))
		return false
	}
	if cs := c.sigs[h.sig]; cs != nil {
		cs.count++
		cs.lastSeq = h.seq
		cs.uncaught = cs.uncaught || h.caughtBy == ""
		if cs.hit.caughtBy == "" {
			cs.hit.caughtBy = h.caughtBy
		}
		cs.addSession(h)
		return false
	}
	if len(c.sigs) >= maxSignatures {
		c.extra++
		return false
	}
	cs := &crashSig{hit: h, count: 1, lastSeq: h.seq, uncaught: h.caughtBy == ""}
	cs.addSession(h)
	c.sigs[h.sig] = cs
	c.order = append(c.order, h.sig)
	return true
}

func (cs *crashSig) addSession(h crashHit) {
	if h.sessionCrash == "" {
		return
	}
	cs.sessions++
	if cs.session == nil {
		cs.session = &h
	}
}

// halfClosedHit files a signature printed after the half-close. Each one
// keeps its excerpt (Node's stack and Go's goroutines follow the line that
// names the crash): the last may be what ended the peer.
func (c *crashes) halfClosedHit(j *Judger, h crashHit) bool {
	if s := j.pc.ladderSignal; s == nil || h.seq < s.Seq {
		c.lastHC = &h
	}
	if cs := c.hcSigs[h.sig]; cs != nil {
		cs.count++
		return true
	}
	if len(c.hcSigs) >= maxSignatures {
		c.extra++
		return false
	}
	c.hcSigs[h.sig] = &crashSig{hit: h, count: 1, lastSeq: h.seq}
	c.hcOrder = append(c.hcOrder, h.sig)
	return true
}

// halfCloseFindings judges the signatures printed after the half-close. A
// write failing on the closed pipe is the fault's doing, and exiting is
// fair with no way to answer; but an exception that went unhandled and
// ended the server (the last signature it printed, not one its SDK said it
// caught, and then a failing exit of its own) is still a crash: a warning,
// since the fault made the write fail. Anything else printed there is a
// note: whether the peer handled it and went on cannot be seen. A client's
// exit is judged by what its scenario expects, so it gets the notes alone.
func (c *crashes) halfCloseFindings(j *Judger) []reports.Finding {
	pc := &j.pc
	hc := pc.halfClose
	fatal := c.halfCloseFatal(j)
	var fs []reports.Finding
	for _, sig := range c.hcOrder {
		cs := c.hcSigs[sig]
		switch {
		case fatal != nil && sig == fatal.sig:
			msg := fmt.Sprintf("%s on stderr%s after mcpchaos closed its output (%s), and the %s %s: the failed write was the fault's doing, but the exception it raised went unhandled and ended the %s (catch the write error and shut down cleanly)",
				sigWords(cs.hit), timesWords(cs.count), hc.Excerpt, j.p.name, pc.exitWords(), j.p.name)
			f := reports.NewFinding(reports.RuleCrashAfterHalfClose, msg, []reports.Evidence{cs.hit.excerpt.evidence(), *hc, *pc.exit})
			f.Signature = sig
			fs = append(fs, f)
		case isEPIPE(cs.hit):
			j.notes.add(fmt.Sprintf("the %s printed %s after mcpchaos closed its output (%s): the failed write is the fault's doing", j.p.name, sig, hc.Excerpt))
		default:
			// With its output gone a peer can answer nothing; what is
			// judged is that it exits (a zombie otherwise), and whether it
			// handled an exception and went on cannot be seen.
			j.notes.add(fmt.Sprintf("the %s printed %s after mcpchaos closed its output (%s): whether it handled it and went on cannot be seen, and its exit is what is judged", j.p.name, sig, hc.Excerpt))
		}
	}
	return fs
}

// halfCloseFatal is the signature printed after the half-close that ended
// the server: the last it printed, not one its SDK said it caught, before a
// failing exit of its own. Nil when there is none, and for a client.
func (c *crashes) halfCloseFatal(j *Judger) *crashHit {
	if last := c.lastHC; j.cl == nil && last != nil && last.caughtBy == "" && j.pc.failedOnItsOwn() {
		return last
	}
	return nil
}

// survived reports whether the peer went on serving after the last time it
// printed a signature: it answered a request after it, or it was still
// serving (its output open) when its stdin closed, and it then exited
// without failing. Its stdout and stderr are two pipes read apart, so an
// answer written just after a traceback may be recorded just before it:
// being alive when told to stop does not depend on that order.
//
// A failing exit that an exception printed after the half-close explains
// (halfCloseFatal) is that exception's, not one printed before the
// half-close: the peer lived past it. Then only what it did before the
// half-close shows it went on serving; the stdin close that follows a
// half-close is the relay's doing.
func (j *Judger) survived(cs *crashSig) bool {
	pc := &j.pc
	hcExit := j.cr.halfCloseFatal(j) != nil
	if pc.exitedBadly() && !hcExit {
		return false
	}
	if a := j.lastAnswer; a != nil && a.Seq > cs.lastSeq {
		return true
	}
	stop, ok := pc.stoppedWhileServing(j)
	return ok && stop.Seq > cs.lastSeq && (!hcExit || stop.Seq < pc.halfClose.Seq)
}

// isCancellation reports whether a signature is a task's cancellation
// (Python's CancelledError, asyncio's or concurrent.futures').
func isCancellation(h crashHit) bool {
	return strings.HasPrefix(h.sig, "python:") && strings.HasSuffix(h.sig, "CancelledError")
}

// isEPIPE reports whether a signature is a write failing on a closed pipe.
func isEPIPE(h crashHit) bool {
	return h.sig == "python:BrokenPipeError" || strings.HasPrefix(h.sig, "node:unhandled-error EPIPE") ||
		strings.Contains(strings.ToLower(h.text), "broken pipe") || strings.Contains(h.text, "EPIPE")
}

func (c *crashes) findings(j *Judger) []reports.Finding {
	fs := c.signatureFindings(j)
	if len(fs) > 0 {
		return fs
	}
	return c.exitFindings(j)
}

// signatureFindings reports each crash signature seen on the peer's stderr,
// those printed after a half-close included.
func (c *crashes) signatureFindings(j *Judger) []reports.Finding {
	c.scan.flush()
	halfClosed := c.halfCloseFindings(j)
	pc := &j.pc
	// The failing exit is judged with the exception that caused it: when
	// one printed after the half-close ended the peer, a signature printed
	// before it did not.
	exitedBadly := pc.exitedBadly() && c.halfCloseFatal(j) == nil
	exitClause := "it had not exited when the transcript ends"
	if pc.exit != nil {
		exitClause = "the " + j.p.name + " " + pc.exitWords()
		if pc.exitByUs {
			exitClause += " (signalled by mcpchaos)"
		}
	}
	var fs []reports.Finding
	for _, sig := range c.order {
		cs := c.sigs[sig]
		times := timesWords(cs.count)
		if cs.session != nil {
			fs = append(fs, sessionCrashFinding(j, cs, exitClause))
			continue
		}
		if j.survived(cs) {
			// An SDK that catches a handler's exception, logs its
			// traceback and returns an error (the Python SDK's "request
			// handler raised") is doing its job.
			j.notes.add(fmt.Sprintf("the %s logged %s%s and went on serving: a handled exception, not a crash",
				j.p.name, sigWords(cs.hit), times))
			continue
		}
		if j.cl != nil {
			if why := j.cl.failedOnCallError(pc, cs.hit); why != "" {
				j.notes.add(fmt.Sprintf("the client ended on its SDK's error for a failed call, %s%s, uncaught, and %s: %s, not a crash",
					cs.hit.text, times, pc.exitWords(), why))
				continue
			}
		}
		if !cs.uncaught && !exitedBadly {
			// Going on serving cannot be seen when the handler raised
			// after the peer was told to stop (eof-inflight), but the
			// SDK said it caught the exception, and the peer then did
			// not fail: its exit is judged on its own.
			j.notes.add(fmt.Sprintf("the %s logged %s%s, each time after its SDK's word that it caught it (%q): a handled exception, not a crash",
				j.p.name, sigWords(cs.hit), times, words.Cut(cs.hit.caughtBy, 120)))
			continue
		}
		if j.cl != nil && j.cl.exitedClean(pc) {
			if g := j.cl.serverGarbage; g != nil && g.Seq < cs.hit.seq {
				// The server sent what no SDK can parse; one that logs the
				// parse error and goes on does its job.
				j.notes.add(fmt.Sprintf("the client logged %s%s after the server had sent it a frame that is not a valid JSON-RPC message (seq %d: %s), and then exited 0 on its own: its SDK reporting the server's fault, not a crash",
					sigWords(cs.hit), times, g.Seq, words.Cut(g.Excerpt, 60)))
				continue
			}
		}
		msg := fmt.Sprintf("%s on stderr%s; %s", sigWords(cs.hit), times, exitClause)
		ev := []reports.Evidence{cs.hit.excerpt.evidence()}
		if pc.exit != nil {
			ev = append(ev, *pc.exit)
		}
		rule := reports.RuleCrashSignature
		if j.cl != nil && j.cl.exitedClean(pc) {
			rule = reports.RuleClientLoggedCrash
			msg += " on its own: its SDK caught the exception, but a task of its transport failed"
		}
		f := reports.NewFinding(rule, msg, ev)
		f.Signature = sig
		fs = append(fs, f)
	}
	if c.extra > 0 {
		j.notes.add(fmt.Sprintf("%d more distinct crash signatures on stderr were not reported (see the transcript)", c.extra))
	}
	return append(fs, halfClosed...)
}

// sessionCrashFinding reports a signature that ended a session of the
// peer's: its SDK caught the exception only to keep the process serving its
// other sessions, so going on serving does not make it handled.
func sessionCrashFinding(j *Judger, cs *crashSig, exitClause string) reports.Finding {
	h := cs.session
	after := exitClause
	if j.survived(cs) {
		after = "the " + j.p.name + " went on serving (its SDK catches the exception only to keep its other sessions alive)"
	}
	msg := fmt.Sprintf("%s ended a session%s: the %s's SDK logged %q with the traceback, and the handlers running in that session died with it, unanswered; %s",
		sigWords(*h), timesWords(cs.sessions), j.p.name, words.Cut(h.sessionCrash, 160), after)
	ev := []reports.Evidence{h.excerpt.evidence()}
	if pc := &j.pc; pc.exit != nil {
		ev = append(ev, *pc.exit)
	}
	f := reports.NewFinding(reports.RuleCrashSession, msg, ev)
	f.Signature = cs.hit.sig
	return f
}

// exitFindings judges how the server exited, when its stderr showed no crash
// signature: a non-zero status or a signal mcpchaos did not send.
func (c *crashes) exitFindings(j *Judger) []reports.Finding {
	pc := &j.pc
	if pc.exit == nil {
		return nil
	}
	var fs []reports.Finding
	x := pc.exit
	hc, sig := pc.halfClose, pc.ourSignal
	switch {
	case pc.exitSig != "":
		switch {
		case pc.exitByUs || pc.sent[pc.exitSig]:
		case pc.exitSig == "SIGPIPE" && hc != nil && hc.Seq < x.Seq:
			j.notes.add(fmt.Sprintf("the %s died of SIGPIPE after mcpchaos closed its output (%s): the fault's doing", j.p.name, hc.Excerpt))
		default:
			f := reports.NewFinding(reports.RuleCrashExit, fmt.Sprintf("the %s was killed by %s, a signal mcpchaos did not send, with no crash signature on stderr", j.p.name, pc.exitSig), []reports.Evidence{*x})
			f.Signature = "signal:" + pc.exitSig
			fs = append(fs, f)
		}
	case pc.exitCode != nil && *pc.exitCode != 0:
		switch {
		case sig != nil && sig.Seq < x.Seq:
			// The status reports our signal (143, or a handler's choice).
		case hc != nil && hc.Seq < x.Seq:
			j.notes.add(fmt.Sprintf("the %s exited with status %d after mcpchaos closed its output (%s): a failed write is a fair reason to fail", j.p.name, *pc.exitCode, hc.Excerpt))
		case pc.toldToStop():
			f := reports.NewFinding(reports.RuleExitStatusAtShutdown, fmt.Sprintf("the %s exited with status %d once its stdin had closed (%s), with no crash signature on stderr", j.p.name, *pc.exitCode, pc.stdinDetail), []reports.Evidence{*pc.stdinClose, *x})
			f.Signature = fmt.Sprintf("exit:%d", *pc.exitCode)
			fs = append(fs, f)
		default:
			f := reports.NewFinding(reports.RuleCrashExit, fmt.Sprintf("the %s exited with status %d, with no crash signature on stderr", j.p.name, *pc.exitCode), []reports.Evidence{*x})
			f.Signature = fmt.Sprintf("exit:%d", *pc.exitCode)
			fs = append(fs, f)
		}
	}
	return fs
}

// sigWords says what a signature is, in the finding's message.
func sigWords(h crashHit) string {
	switch {
	case strings.HasPrefix(h.sig, "python:"):
		return "Python exception " + h.text
	case h.sig == "go:panic":
		return "Go panic: " + h.text
	case strings.HasPrefix(h.sig, "go:"):
		return "Go fatal error: " + h.text
	case strings.HasPrefix(h.sig, "node:unhandled-error"):
		return "Node.js unhandled 'error' event: " + h.text
	case h.sig == "node:unhandled-rejection":
		return "Node.js unhandled promise rejection: " + h.text
	case strings.HasPrefix(h.sig, "node:"):
		return "Node.js uncaught exception: " + h.text
	}
	return h.text
}

// timesWords says how often a signature was seen, when more than once.
func timesWords(n int) string {
	if n > 1 {
		return fmt.Sprintf(" (%d times)", n)
	}
	return ""
}
