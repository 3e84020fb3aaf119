package judge

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// signalFault records a signal fault's decision and the signal it sent, as
// the relay does; untilMS > 0 marks a STOP's window.
func (b *tb) signalFault(sig string, untilMS float64) int64 {
	e := wire.Event{Type: wire.EventFault, Fault: "signal#1", Action: "signal", Detail: "send " + sig}
	if untilMS > 0 {
		e.Dir, e.UntilUS = "s2c", int64(untilMS*1000)
	}
	b.add(e)
	return b.signal(sig, "fault signal#1")
}

// TestJudgeSignalFault: a server a signal fault killed or stopped.
func TestJudgeSignalFault(t *testing.T) {
	goPanic := []string{"panic: runtime error: invalid memory address or nil pointer dereference", "", "goroutine 1 [running]:", "main.main()"}
	runJudgeCases(t, []judgeCase{
		{
			name: "killed by the fault's SIGKILL: no crash, the open call is the fault's",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).signalFault("SIGKILL", 0)
				b.stdoutEOF()
				b.killed("SIGKILL", false)
				b.at(20).end("the server exited")
			},
			notes: []string{"tools/call (id 1) unanswered when the server ended, after mcpchaos signalled it before the deadline"},
		},
		{
			name: "a status after the fault's SIGTERM is the fault's",
			build: func(b *tb) {
				b.at(10).signalFault("SIGTERM", 0)
				b.stdoutEOF()
				b.exit(1)
				b.at(20).end("the server exited")
			},
		},
		{
			name: "a panic on stderr after the fault's SIGTERM is still a crash",
			build: func(b *tb) {
				b.at(10).signalFault("SIGTERM", 0)
				b.stderr(goPanic...)
				b.stdoutEOF()
				b.exit(2)
				b.at(20).end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "go:panic", Seqs: seqs(5, 10),
				Message: "Go panic: runtime error: invalid memory address or nil pointer dereference on stderr; the server exited with status 2"}},
		},
		{
			name: "a panic after the ladder's SIGTERM is not judged, as before",
			build: func(b *tb) {
				b.clientClosed()
				b.at(1000).signal("SIGTERM", "the server did not exit within 1s of its stdin closing")
				b.stderr(goPanic...)
				b.killed("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityWarning, Seqs: seqs(3, 4, 9),
				Message: "the server did not exit within 3s of its stdin closing (the client closed its output); SIGTERM ended it 1s after its stdin closed"}},
			notes: []string{"printed go:panic after mcpchaos signalled it"},
		},
		{
			// In a run of several sessions over HTTP, the fault's decision
			// is in the struck session's record only; the others have the
			// signal, labelled with the fault (issue 39).
			name: "another session's fault's SIGTERM, known by its label: the open call is the fault's, a panic after it a crash",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).add(wire.Event{Type: wire.EventSignal, Signal: "SIGTERM", PID: 42, Fault: "signal#1", Detail: "fault signal#1", ByUs: true})
				b.stderr(goPanic...)
				b.stdoutEOF()
				b.exit(2)
				b.at(20).end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "go:panic", Seqs: seqs(6, 11),
				Message: "Go panic: runtime error: invalid memory address or nil pointer dereference on stderr; the server exited with status 2"}},
			notes: []string{"tools/call (id 1) unanswered when the server ended, after mcpchaos signalled it before the deadline (sent SIGTERM: fault signal#1)"},
		},
		{
			name: "a task cancelled by the shutdown the fault's SIGTERM asked for is not a crash",
			build: func(b *tb) {
				b.at(10).signalFault("SIGTERM", 0)
				b.stderr("ERROR:    Exception in ASGI application", "Traceback (most recent call last):",
					`  File "/venv/lib/python3.11/site-packages/starlette/responses.py", line 260, in wrap`,
					"    await self._on_completed_fut",
					"asyncio.exceptions.CancelledError: Task cancelled, timeout graceful shutdown exceeded")
				b.stdoutEOF()
				b.killed("SIGTERM", false)
				b.at(20).end("the server exited")
			},
			notes: []string{"the server printed python:CancelledError after mcpchaos signalled it (sent SIGTERM: fault signal#1): its shutdown cancelling a task, not a crash"},
		},
		{
			name: "silence during a STOP is excused: the deadline runs outside the window",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).signalFault("SIGSTOP", 8100)
				b.at(8100).signal("SIGCONT", "fault signal#1: the STOP lasted 8s")
				b.at(12000).end("interrupted")
			},
			notes: []string{"tools/call (id 1) unanswered when the transcript ends, before the deadline"},
		},
		{
			name: "the same silence without the STOP is a hang",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(12000).end("interrupted")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4),
				Message: "tools/call (id 1) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"}},
		},
		{
			name: "after SIGCONT the server must answer again: a hang past the deadline plus the window",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).signalFault("SIGSTOP", 8100)
				b.at(8100).signal("SIGCONT", "fault signal#1: the STOP lasted 8s")
				b.at(20000).end("interrupted")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4),
				Message: "tools/call (id 1) unanswered after 5s (plus 8s while a fault held the server's output); no liveness ping was sent, so whether its receive loop runs is unknown"}},
		},
		{
			name: "SIGSTOP and SIGCONT end nothing: the ladder's SIGTERM after them is still the ladder's",
			build: func(b *tb) {
				b.signalFault("SIGSTOP", 100)
				b.clientClosed()
				b.signal("SIGCONT", "the shutdown ladder starts: the client closed its output")
				b.at(3000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.exit(143)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityWarning, Seqs: seqs(5, 7, 8),
				Message: "the server did not exit within 3s of its stdin closing (the client closed its output); SIGTERM ended it 3s after its stdin closed"}},
		},
	})
}
