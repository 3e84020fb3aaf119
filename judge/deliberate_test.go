package judge

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The duplicate and corrupt faults deliver frames the client never sent
// that way. What a correct server does with them (answer a copied request
// again, answer a broken line with a parse error) is not its finding.
func TestFramesFaultsDeliveredOnPurpose(t *testing.T) {
	const (
		call        = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}`
		split       = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/ca\nll\",\"params\":{}}"
		parseError  = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`
		replaced    = "replaced by fault corrupt#1"
		unknownNull = "the server sent 2 answers for ids never requested (null, null); an error with id null answers an unparseable frame, and none was sent"
	)
	runJudgeCases(t, []judgeCase{
		{
			name: "a copied request answered twice",
			build: func(b *tb) {
				seq := b.recv("c2s", call)
				b.fwd("c2s", seq)
				b.fwd("c2s", seq) // duplicate#1's copy
				b.at(10).reply("5")
				b.at(11).reply("5")
				b.at(100).finish()
			},
		},
		{
			name: "a copied request answered once (the server ignores the reused id)",
			build: func(b *tb) {
				seq := b.recv("c2s", call)
				b.fwd("c2s", seq)
				b.fwd("c2s", seq)
				b.at(10).reply("5")
				b.at(100).finish()
			},
		},
		{
			name: "without a copy, a second answer is still a duplicate",
			build: func(b *tb) {
				b.call("5", "tools/call")
				b.at(10).reply("5")
				b.at(11).reply("5")
				b.at(100).finish()
			},
			want: []short{{Kind: reports.KindDuplicateResponse, Severity: reports.SeverityError, Request: req("5", "tools/call"), Seqs: seqs(5, 7),
				Message: "the server answered tools/call (id 5) more than once"}},
		},
		{
			name: "a request split in two lines by corrupt, each answered with a parse error, one before the injection is recorded",
			build: func(b *tb) {
				seq := b.recv("c2s", call)
				b.drop("c2s", seq, replaced)
				b.at(1).recv("s2c", parseError)
				b.inject("c2s", "corrupt#1", split)
				b.at(2).recv("s2c", parseError)
				b.at(100).finish()
			},
		},
		{
			name: "a truncated request (no line ending) glues the next request to it: one parse error, and the glued request is not owed",
			build: func(b *tb) {
				seq := b.recv("c2s", call)
				b.drop("c2s", seq, replaced)
				b.injectTruncated("c2s", "corrupt#1", call[:len(call)/2])
				next := b.at(1).recv("c2s", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo"}}`)
				b.fwd("c2s", next)
				b.at(2).recv("s2c", parseError)
				b.at(10000).finish()
			},
		},
		{
			name: "a request given a wrong jsonrpc by corrupt, its error answer recorded before the injection",
			build: func(b *tb) {
				seq := b.recv("c2s", call)
				b.drop("c2s", seq, replaced)
				b.at(1).replyRaw(`{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid JSON-RPC version"}}`)
				b.inject("c2s", "corrupt#1", `{"jsonrpc":"1.0","id":5,"method":"tools/call","params":{"name":"echo"}}`)
				b.at(1000).finish()
			},
		},
		{
			name: "parse errors nothing explains are unknown",
			build: func(b *tb) {
				b.call("5", "tools/call")
				b.at(1).reply("5")
				b.at(2).recv("s2c", parseError)
				b.at(3).recv("s2c", parseError)
				b.at(1000).finish()
			},
			want: []short{{Kind: reports.KindUnknownResponse, Severity: reports.SeverityError, Request: req("null", ""), Seqs: seqs(7, 8), Message: unknownNull}},
		},
	})
}

// injectTruncated records a frame a fault wrote as it is, here without its
// line ending.
func (b *tb) injectTruncated(dir, fault, raw string) int64 {
	m := wire.Classify([]byte(raw))
	e := wire.Event{Type: wire.EventInjected, Fault: fault}
	e.SetMessage(dirOf(dir), &m)
	return b.add(e)
}

// A client whose answer was read glued to a truncated frame never got it:
// its wait is mcpchaos's doing, said in the hang message.
func TestClientAnswerGluedToATruncatedFrame(t *testing.T) {
	runClientCases(t, expectSuccess, []judgeCase{
		{
			name: "glued answer",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.injectTruncated("s2c", "corrupt#1", `{"jsonrpc":"2.0","method":"notifications/pro`)
				b.reply("1")
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 9, 10),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 1), was answered, " +
					"but mcpchaos dropped the answer (it was read glued to the truncated frame fault corrupt#1 wrote before it), so it waits for an answer that cannot come; " +
					"no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
			unknown: []string{"no session-end event"},
		},
	})
}

// A throttle pacing a long frame toward the client reads nothing from the
// server meanwhile: an answer the server wrote in time may still sit unread
// in the pipe when the session ends, and that is the fault's doing, as under
// a stall. Without the window it is a hang.
func TestThrottleWindowExcusesLateReads(t *testing.T) {
	paced := func(b *tb) {
		b.add(wire.Event{Type: wire.EventFault, Fault: "throttle#1", Action: "throttle", Dir: "s2c",
			UntilUS: b.t + 8000*1000, Detail: "pace a frame of 16384 bytes over 8s"})
	}
	for _, tc := range []struct {
		name   string
		window bool
		want   []short
		notes  []string
	}{
		{"the answer unread while a throttle paced another frame: no finding", true, nil,
			[]string{"tools/call (id 2) unanswered, but a fault (a stall, a throttle, a SIGSTOP, a stderr flood) held the server's output before the deadline"}},
		{"the same lateness without the throttle: a hang", false, []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("2", "tools/call"), Seqs: seqs(5, 6),
			Message: "tools/call (id 2) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"}},
			nil},
	} {
		runJudgeCases(t, []judgeCase{{
			name: tc.name,
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.call("2", "tools/call")
				b.at(10).reply("1")
				if tc.window {
					paced(b)
				}
				// The transcript ends here, mid-session (as when mcpchaos is
				// killed): the window has not lifted.
				b.at(6000).recv("s2c", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
			},
			want:    tc.want,
			notes:   tc.notes,
			unknown: []string{"no session-end event"},
		}})
	}
}
