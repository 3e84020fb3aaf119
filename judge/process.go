package judge

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// processFacts are the lifecycle events of the peer under test: its pipes
// closing, the signals mcpchaos sent it, its exit. The checks ask when
// each happened, and whether we caused it.
type processFacts struct {
	stdinClose  *reports.Evidence
	stdinDetail string
	// stdoutEOF is the peer ending its output; halfClose is mcpchaos
	// closing it (a half-close fault).
	stdoutEOF *reports.Evidence
	halfClose *reports.Evidence

	exit     *reports.Evidence
	exitCode *int
	exitSig  string
	exitByUs bool

	// ourSignal is the first signal mcpchaos sent that can have ended the
	// peer: the shutdown ladder's or a signal fault's. sent names them all.
	ourSignal *reports.Evidence
	sent      map[string]bool
	// ladderSignal is the first signal of the shutdown ladder: a crash
	// signature after it is the dying, not a bug. A signal fault's is not
	// such an excuse: a server that crashes on SIGTERM crashed.
	ladderSignal *reports.Evidence
	ladderTerm   *reports.Evidence // the ladder's SIGTERM
	ladderKill   *reports.Evidence // the ladder's SIGKILL, after its SIGTERM
	// faultSignal is set by a signal fault's decision, for the signal event
	// that follows it.
	faultSignal bool

	stallEvidence []reports.Evidence
}

// clientShutdown lists how the relay says, when it closes the server's
// stdin, that the client side ended the session. Such a close tells the
// server to shut down (MCP stdio shutdown); an eof fault's close does not.
var clientShutdown = []string{
	"the client closed its output",
	"the client stopped reading its input",
	"reading from the client failed",
	"interrupted",
}

func (pc *processFacts) pipeClosed(j *Judger, e *wire.Event) {
	ev := evidenceOf(e)
	switch e.Pipe {
	case j.p.inPipe:
		if pc.stdinClose == nil {
			pc.stdinClose, pc.stdinDetail = &ev, e.Detail
		}
	case j.p.outPipe:
		switch {
		case e.ByUs && pc.halfClose == nil:
			pc.halfClose = &ev
		case !e.ByUs && pc.stdoutEOF == nil:
			pc.stdoutEOF = &ev
		}
	}
}

// signal sorts the signals mcpchaos sent. The ladder sends SIGTERM and then
// SIGKILL; a signal fault announces itself with a fault event first. A
// SIGKILL with neither before it is the clean-up of the process group after
// the server had already exited, which ended nothing the judge cares about.
func (pc *processFacts) signal(e *wire.Event) {
	if !e.ByUs {
		return
	}
	// Over HTTP a fault's signal carries its label: in a run of several
	// sessions only the struck session's record holds the fault's decision.
	fault := pc.faultSignal || e.Fault != ""
	pc.faultSignal = false
	if e.Signal == "SIGSTOP" || e.Signal == "SIGCONT" || e.Detail == wire.GroupCleanupDetail {
		// A pause ends nothing; its window is the fault event's. The
		// clean-up of the group comes after the server exited (npx, whose
		// node it kills, ended on the ladder's SIGTERM).
		return
	}
	ev := evidenceOf(e)
	switch {
	case fault:
	case e.Signal == "SIGTERM":
		if pc.ladderTerm == nil {
			pc.ladderTerm = &ev
		}
	case pc.ladderTerm != nil:
		if pc.ladderKill == nil {
			pc.ladderKill = &ev
		}
	default:
		return
	}
	if pc.ourSignal == nil {
		pc.ourSignal = &ev
	}
	if !fault && pc.ladderSignal == nil {
		pc.ladderSignal = &ev
	}
	if pc.sent == nil {
		pc.sent = map[string]bool{}
	}
	pc.sent[e.Signal] = true
}

func (pc *processFacts) exited(e *wire.Event) {
	ev := evidenceOf(e)
	pc.exit, pc.exitCode, pc.exitSig, pc.exitByUs = &ev, e.ExitCode, e.Signal, e.ByUs
}

// loss is when the peer could no longer answer: it ended its output or
// exited, whichever came first. The relay records the exit only after
// draining the pipes, so the end of output is the closer estimate.
func (pc *processFacts) loss(name string) (t int64, ev reports.Evidence, words string, ok bool) {
	switch {
	case pc.stdoutEOF != nil && (pc.exit == nil || pc.stdoutEOF.TUS <= pc.exit.TUS):
		words = "closed its stdout"
		if pc.exit != nil {
			words += " and " + pc.exitWords()
		}
		return pc.stdoutEOF.TUS, *pc.stdoutEOF, name + " " + words, true
	case pc.exit != nil:
		return pc.exit.TUS, *pc.exit, name + " " + pc.exitWords(), true
	}
	return 0, reports.Evidence{}, "", false
}

// toldToStop reports whether the peer's stdin closed while it still ran:
// the stdio shutdown asking it to exit. The relay also closes the stdin of
// a server whose output has ended, which asks nothing of it.
func (pc *processFacts) toldToStop() bool {
	in := pc.stdinClose
	if in == nil || pc.stdoutEOF != nil && pc.stdoutEOF.Seq < in.Seq {
		return false
	}
	return pc.exit == nil || in.Seq < pc.exit.Seq
}

// exitedBadly reports whether the peer exited with a non-zero status or of
// a signal mcpchaos did not send.
func (pc *processFacts) exitedBadly() bool {
	switch {
	case pc.exit == nil:
		return false
	case pc.exitSig != "":
		return !pc.exitByUs && !pc.sent[pc.exitSig]
	}
	return pc.exitCode != nil && *pc.exitCode != 0
}

// failedOnItsOwn reports whether the peer exited with a non-zero status, or
// of a signal nobody sent, with no signal of ours before its exit. Dying of
// SIGPIPE does not count: that is how the OS stops a writer whose pipe has
// no reader (and Go's runtime raises it for stdout on purpose), not an
// exception the program left unhandled.
func (pc *processFacts) failedOnItsOwn() bool {
	if !pc.exitedBadly() || pc.exitSig == "SIGPIPE" {
		return false
	}
	s := pc.ourSignal
	return s == nil || pc.exit.Seq < s.Seq
}

// exitBadlyOrSignalled reports whether the peer's exit was anything but a
// status 0 of its own.
func (pc *processFacts) exitBadlyOrSignalled() bool {
	return pc.exitSig != "" || pc.exitCode == nil || *pc.exitCode != 0
}

// exitWords says how the peer exited, as its process-exited event does.
func (pc *processFacts) exitWords() string {
	e := wire.Event{ExitCode: pc.exitCode, Signal: pc.exitSig}
	return e.ExitWords()
}

// zombie checks the MCP stdio shutdown: once its stdin closes, the server
// must exit within the grace period, before the ladder has to signal it.
func (pc *processFacts) zombie(j *Judger) []reports.Finding {
	c := pc.stdinClose
	if c == nil || !j.p.process {
		return nil
	}
	endT := j.endT()
	grace := words.Duration(j.graceUS)
	var how string
	// Only a server that SIGTERM ended kept to the specification's
	// shutdown; one that needed SIGKILL, or outlived the transcript, did not.
	rule := reports.RuleShutdownSIGKILL
	ev := []reports.Evidence{*c}
	switch t := pc.ladderTerm; {
	case t != nil && t.Seq > c.Seq:
		if j.st.heldAt(t.TUS, endT) {
			j.notes.add(fmt.Sprintf("the %s did not exit within %s of its stdin closing, but a stall fault had stopped mcpchaos reading its output: it may have been blocked writing", j.p.name, grace))
			return nil
		}
		ev = append(ev, *t)
		switch {
		case pc.exit != nil && (pc.exitSig == "SIGKILL" || pc.ladderKill != nil && pc.ladderKill.Seq < pc.exit.Seq):
			how = fmt.Sprintf("SIGTERM did not end it; SIGKILL did, %s after its stdin closed", words.Duration(pc.exit.TUS-c.TUS))
		case pc.exit != nil:
			rule = reports.RuleShutdownSIGTERM
			how = fmt.Sprintf("SIGTERM ended it %s after its stdin closed", words.Duration(pc.exit.TUS-c.TUS))
		case pc.ladderKill != nil:
			how = fmt.Sprintf("it had not exited when the transcript ends, %s after its stdin closed, even after SIGKILL", words.Duration(endT-c.TUS))
		default:
			how = fmt.Sprintf("it had not exited when the transcript ends, %s after its stdin closed and SIGTERM", words.Duration(endT-c.TUS))
		}
		if pc.ladderKill != nil {
			ev = append(ev, *pc.ladderKill)
		}
	case pc.exit == nil && endT-c.TUS >= j.graceUS:
		if j.st.heldAt(c.TUS+j.graceUS, endT) {
			j.notes.add(fmt.Sprintf("the %s did not exit within %s of its stdin closing, but a stall fault had stopped mcpchaos reading its output: it may have been blocked writing", j.p.name, grace))
			return nil
		}
		how = fmt.Sprintf("it had not exited when the transcript ends, %s after its stdin closed", words.Duration(endT-c.TUS))
	case pc.exit == nil:
		if j.end == nil {
			j.unknown.add(fmt.Sprintf("the transcript ends %s after the %s's stdin closed, within the %s grace period: whether it exits is unknown", words.Duration(endT-c.TUS), j.p.name, grace))
		}
		return nil
	default:
		return nil
	}
	if pc.exit != nil {
		ev = append(ev, *pc.exit)
	}
	msg := fmt.Sprintf("the %s did not exit within %s of its stdin closing (%s); %s", j.p.name, grace, pc.stdinDetail, how)
	return []reports.Finding{reports.NewFinding(rule, msg, ev)}
}

// httpZombie checks an HTTP server the run started (test --url -- CMD):
// stopped with SIGTERM once the session ended, it must exit within the
// grace period rather than need SIGKILL.
func (pc *processFacts) httpZombie(j *Judger) []reports.Finding {
	t := pc.ladderTerm
	if !j.http || !j.p.process || t == nil {
		return nil
	}
	grace := words.Duration(j.graceUS)
	ev := []reports.Evidence{*t}
	var how string
	switch {
	case pc.ladderKill != nil:
		ev = append(ev, *pc.ladderKill)
		how = "SIGKILL ended it"
		if pc.exit == nil {
			how = "it had not exited when the transcript ends, even after SIGKILL"
		}
	case pc.exit == nil && j.endT()-t.TUS >= j.graceUS:
		how = fmt.Sprintf("it had not exited when the transcript ends, %s after SIGTERM", words.Duration(j.endT()-t.TUS))
	default:
		return nil
	}
	if pc.exit != nil {
		ev = append(ev, *pc.exit)
	}
	msg := fmt.Sprintf("the HTTP %s did not exit within %s of SIGTERM (%s); %s", j.p.name, grace, t.Excerpt, how)
	return []reports.Finding{reports.NewFinding(reports.RuleHTTPShutdownSIGKILL, msg, ev)}
}

// stoppedWhileServing reports whether the peer was asked to stop while it
// still ran: its stdin closing (stdio), or the ladder's SIGTERM (HTTP,
// where nothing else asks), and returns that moment.
func (pc *processFacts) stoppedWhileServing(j *Judger) (*reports.Evidence, bool) {
	if j.http {
		t := pc.ladderTerm
		return t, t != nil && (pc.exit == nil || t.Seq < pc.exit.Seq)
	}
	return pc.stdinClose, pc.toldToStop()
}
