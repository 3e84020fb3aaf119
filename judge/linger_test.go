package judge

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// lingerFault is a linger fault's decision, and later its ignoring the
// client's EOF, as the relay records them.
func (b *tb) lingerFault(detail string) int64 {
	return b.add(wire.Event{Type: wire.EventFault, Fault: "linger#1", Action: "linger", Detail: detail})
}

// TestJudgeClientUnderLinger: under a linger fault the server end ignores the
// client's EOF for a while. A client that waits for ever is a hang at its
// deadline; one that waits the linger out, or escalates, is not.
func TestJudgeClientUnderLinger(t *testing.T) {
	runClientCases(t, expectSuccess, []judgeCase{
		{
			name: "it closed its output and waits for ever on a server that lingers: a hang",
			build: func(b *tb) {
				b.lingerFault("ignore the client's EOF and SIGTERM/SIGINT for 1h0m0s once they come")
				b.call("1", "tools/call")
				b.reply("1")
				b.at(1000).pipe(wire.PipeClientInput, "end of file", false)
				b.lingerFault("ignored (the client closed its output): the linger lasts 1h0m0s more")
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(5, 7, 9, 10, 11, 12),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 1), was answered, so it received the answer but is stuck; " +
					"it had closed its output to the server at 1s but did not exit; " +
					"the server end did not exit when told (fault linger#1 (linger): ignored (the client closed its output): the linger lasts 1h0m0s more): a client must escalate to SIGTERM and SIGKILL rather than wait for ever; " +
					"no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
		},
		{
			name: "it waits the linger out and exits: no finding",
			build: func(b *tb) {
				b.lingerFault("ignore the client's EOF and SIGTERM/SIGINT for 3s once they come")
				b.call("1", "tools/call")
				b.reply("1")
				b.at(1000).pipe(wire.PipeClientInput, "end of file", false)
				b.lingerFault("ignored (the client closed its output): the linger lasts 3s more")
				b.at(4000).lingerFault("the linger ends: shutting down as asked (the client closed its output)")
				b.clientClosed()
				b.stdoutEOF()
				b.exit(0)
				b.pipe(wire.PipeClientOutput, "the server exited", true)
				b.end("the client closed its output")
				b.cexit(0)
			},
		},
		{
			name: "it escalates to SIGKILL of its server and exits: no finding",
			build: func(b *tb) {
				b.lingerFault("ignore the client's EOF and SIGTERM/SIGINT for 1h0m0s once they come")
				b.call("1", "tools/call")
				b.reply("1")
				b.at(1000).pipe(wire.PipeClientInput, "end of file", false)
				b.lingerFault("ignored (the client closed its output): the linger lasts 1h0m0s more")
				b.at(3000).lingerFault("ignored (mcpchaos got SIGTERM): the linger lasts 58m0s more")
				// The client's SIGKILL ends wrap mid-transcript.
				b.at(6000).cexit(0)
			},
			// No "no session-end event" note: the kill is the client doing
			// its job, and the scenario passes.
		},
	})
}
