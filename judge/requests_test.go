package judge

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Seqs in these tables: 1 is the session event, 2 process-started, so the
// first call's received and forwarded events are 3 and 4.

func TestJudgeRequests(t *testing.T) {
	const noPing = "tools/call (id 1) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"
	runJudgeCases(t, []judgeCase{
		{
			name: "answered in time",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).reply("1")
				b.at(200).finish()
			},
		},
		{
			name: "answered after the deadline is late, not a hang",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(7000).reply("1")
				b.at(8000).finish()
			},
		},
		{
			name: "hang: the server answers pings, so the handler is stuck",
			build: func(b *tb) {
				b.call("1", "tools/call")
				id := b.at(5000).probe(1, 3)
				b.at(5001).probeAnswer(id)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 5, 6),
				Message: "tools/call (id 1) unanswered after 5s; the server answered a liveness ping, so its receive loop runs but the handler is stuck"}},
		},
		{
			name: "hang: the ping is unanswered too, so the receive loop is stuck",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(5000).probe(1, 3)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 5),
				Message: "tools/call (id 1) unanswered after 5s; liveness ping unanswered: the server's receive loop is stuck"}},
		},
		{
			name: "hang: a ping without of, sent while the request was open, is its evidence",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(4999).probe(1, 0)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 5),
				Message: "tools/call (id 1) unanswered after 5s; liveness ping unanswered: the server's receive loop is stuck"}},
		},
		{
			name: "hang: a ping answered before the request was sent says nothing about it",
			build: func(b *tb) {
				id := b.probe(1, 0)
				b.probeAnswer(id)
				b.at(10).call("1", "tools/call")
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(6, 7), Message: noPing}},
		},
		{
			name: "hang: a ping after the client closed the server's stdin tells nothing",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(6000).clientClosed()
				b.probe(1, 3)
				b.at(6100).stdoutEOF()
				b.exit(0)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4), Message: noPing}},
		},
		{
			name: "three stuck calls are one finding",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.call("2", "tools/call")
				b.call("3", "tools/call")
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 5, 7),
				Message: "3 tools/call requests (ids 1, 2, 3) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"}},
		},
		{
			name: "a stall that lifts extends the deadline: the hang says by how much",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).stall(3000)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4),
				Message: "tools/call (id 1) unanswered after 5s (plus 2s while a fault held the server's output); no liveness ping was sent, so whether its receive loop runs is unknown"}},
		},
		{
			name: "a stall that lifts extends the deadline: an exit inside the extension is a lost response",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).stall(3000)
				b.at(6000).stdoutEOF()
				b.exit(0)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 6),
				Message: "tools/call (id 1) left unanswered: the server closed its stdout and exited with status 0"}},
		},
		{
			name: "a stall that never lifts explains an unanswered request",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).stall(-1)
				b.at(20000).stderr("still working")
			},
			notes:   []string{"held the server's output before the deadline and did not lift"},
			unknown: []string{"no session-end event"},
		},
		{
			name: "a stall that had not lifted when the session ended counts as for ever",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).stall(60000)
				b.at(20000).end("interrupted")
			},
			notes: []string{"did not lift"},
		},
		{
			name: "a stall that never lifts, then the ladder: our SIGTERM ended the server before the deadline",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).stall(-1)
				b.at(6000).clientClosed()
				b.at(9000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.killed("SIGTERM", true)
				b.end("the client closed its output")
			},
			notes: []string{
				"tools/call (id 1) unanswered when the server ended, after mcpchaos signalled it before the deadline",
				"the server did not exit within 3s of its stdin closing, but a stall fault had stopped mcpchaos reading its output",
			},
		},
		{
			name: "a half-close of the server's stdout before the deadline explains",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).halfClose()
				b.at(10000).clientClosed()
				b.exit(0)
				b.end("the client closed its output")
			},
			notes: []string{"tools/call (id 1) unanswered, but mcpchaos closed the server's output (server-stdout closed by mcpchaos: half-closed by fault half-close#1) before the deadline"},
		},
		{
			name: "a request we dropped never reached the server",
			build: func(b *tb) {
				s := b.recv("c2s", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
				b.drop("c2s", s, "the session ended while this direction was stalled")
				b.at(10000).finish()
			},
		},
		{
			name: "a request forwarded into a write that failed never reached the server",
			build: func(b *tb) {
				s := b.call("1", "tools/call")
				b.drop("c2s", s, "writing to server-stdin failed: broken pipe")
				b.at(10000).finish()
			},
		},
		{
			name: "an eof fault does not excuse: the server exits without answering",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).eofFault()
				b.at(200).stdoutEOF()
				b.exit(0)
				b.end("the server exited")
			},
			// Told to shut down by the early EOF, as by a client: a warning.
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityWarning, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 6, 7),
				Message: "tools/call (id 1) left unanswered: the server closed its stdout and exited with status 0 after its stdin closed (early EOF from fault eof#1), so it was shutting down"}},
		},
		{
			name: "an eof fault does not excuse: the server stays alive past the deadline",
			build: func(b *tb) {
				b.evs[0].GraceMS = 10000
				b.call("1", "tools/call")
				b.at(100).eofFault()
				b.at(6000).stdoutEOF()
				b.exit(0)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4), Message: noPing}},
		},
		{
			name: "the client closed the server's stdin: a lost response is a warning",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).clientClosed()
				b.at(1100).stdoutEOF()
				b.exit(0)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityWarning, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 5, 6),
				Message: "tools/call (id 1) left unanswered: the server closed its stdout and exited with status 0 after its stdin closed (the client closed its output), so it was shutting down"}},
		},
		{
			name: "the server dies on its own: lost response and crash",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).stdoutEOF()
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{
				{Kind: reports.KindLostResponse, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 5),
					Message: "tools/call (id 1) left unanswered: the server closed its stdout and exited with status 1"},
				{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "exit:1", Seqs: seqs(6),
					Message: "the server exited with status 1, with no crash signature on stderr"},
			},
		},
		{
			name: "the server ends its output but keeps running",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).stdoutEOF()
				b.at(10000).clientClosed()
				b.exit(0)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 5),
				Message: "tools/call (id 1) left unanswered: the server closed its stdout and exited with status 0"}},
		},
		{
			name: "our SIGTERM before the deadline explains the loss (the zombie is the finding)",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).clientClosed()
				b.at(4000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.killed("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityWarning, Seqs: seqs(5, 6, 7),
				Message: "the server did not exit within 3s of its stdin closing (the client closed its output); SIGTERM ended it 3s after its stdin closed"}},
			notes: []string{"tools/call (id 1) unanswered when the server ended, after mcpchaos signalled it before the deadline"},
		},
		{
			name: "overdue before we signalled: a hang",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(8000).clientClosed()
				b.at(11000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.killed("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{
				{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4), Message: noPing},
				{Kind: reports.KindZombie, Severity: reports.SeverityWarning, Seqs: seqs(5, 6, 7),
					Message: "the server did not exit within 3s of its stdin closing (the client closed its output); SIGTERM ended it 3s after its stdin closed"},
			},
		},
		{
			name: "a cancelled request needs no answer",
			build: func(b *tb) {
				b.call("1", "tools/call")
				s := b.at(100).recv("c2s", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)
				b.fwd("c2s", s)
				b.at(10000).finish()
			},
		},
		{
			name: "an answer racing a cancellation is allowed once",
			build: func(b *tb) {
				b.call("1", "tools/call")
				s := b.at(100).recv("c2s", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
				b.fwd("c2s", s)
				b.at(101).reply("1")
				b.at(102).reply("1")
				b.at(200).finish()
			},
			want: []short{{Kind: reports.KindDuplicateResponse, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(7, 9),
				Message: "the server answered tools/call (id 1) more than once"}},
		},
		{
			name: "duplicate response",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).reply("1")
				b.at(101).reply("1")
				b.at(200).finish()
			},
			want: []short{{Kind: reports.KindDuplicateResponse, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(5, 7),
				Message: "the server answered tools/call (id 1) more than once"}},
		},
		{
			name: "duplicates of several requests are one finding per method",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.call(`"b"`, "tools/call")
				b.reply("1")
				b.reply(`"b"`)
				b.reply("1")
				b.reply(`"b"`)
				b.at(200).finish()
			},
			want: []short{{Kind: reports.KindDuplicateResponse, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(7, 11, 9, 13),
				Message: `the server sent 2 extra answers to tools/call requests (ids 1, "b")`}},
		},
		{
			name: "an id the client reuses after its answer is a new request",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.reply("1")
				b.call("1", "tools/list")
				b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
				b.at(200).finish()
			},
		},
		{
			name: "unknown response",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.reply("1")
				b.reply("9")
				b.at(200).finish()
			},
			want: []short{{Kind: reports.KindUnknownResponse, Severity: reports.SeverityError, Request: &reports.Request{ID: "9"}, Seqs: seqs(7),
				Message: "the server answered id 9, which was never requested"}},
		},
		{
			name: "an error with id null answers the invalid frame the client sent",
			build: func(b *tb) {
				s := b.recv("c2s", `{"jsonrpc":"2.0","id":1,"method":`)
				b.fwd("c2s", s)
				b.replyRaw(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
				b.at(200).finish()
			},
		},
		{
			name: "an error with id null, with no invalid frame to answer, is unknown",
			build: func(b *tb) {
				s := b.recv("c2s", `not json`)
				b.fwd("c2s", s)
				b.replyRaw(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
				b.replyRaw(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
				b.at(200).finish()
			},
			want: []short{{Kind: reports.KindUnknownResponse, Severity: reports.SeverityError, Request: &reports.Request{ID: "null"}, Seqs: seqs(7),
				Message: "the server answered id null, which was never requested; an error with id null answers an unparseable frame, and none was sent"}},
		},
		{
			name: "an invalid frame the client sent with an id may be answered by that id",
			build: func(b *tb) {
				s := b.recv("c2s", `{"jsonrpc":"1.0","id":4,"method":"tools/call"}`)
				b.fwd("c2s", s)
				b.replyRaw(`{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid Request"}}`)
				b.at(200).finish()
			},
		},
		{
			name: "answers to liveness probes are never unknown, even to a probe we did not record",
			build: func(b *tb) {
				b.probeAnswer(`"mcpchaos-probe-99"`)
				b.at(200).finish()
			},
		},
		{
			name: "the answer to a request mcpchaos injected is not unknown",
			build: func(b *tb) {
				m := wire.Classify([]byte(`{"jsonrpc":"2.0","id":"inj-1","method":"ping"}` + "\n"))
				e := wire.Event{Type: wire.EventInjected, Fault: "inject#1"}
				e.SetMessage(wire.ToServer, &m)
				b.add(e)
				b.reply(`"inj-1"`)
				b.at(200).finish()
			},
		},
		// The relay records forwarded, probe and injected events after the
		// write, so a fast peer's answer can be recorded first.
		{
			name: "an answer recorded before the forwarded event of its request",
			build: func(b *tb) {
				s := b.recv("c2s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`)
				b.reply("1")
				b.fwd("c2s", s)
				b.at(10000).finish()
			},
		},
		{
			name: "a probe answer recorded before its probe event",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(5000).probeAnswer(`"mcpchaos-probe-1"`)
				b.probe(1, 3)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 7, 5),
				Message: "tools/call (id 1) unanswered after 5s; the server answered a liveness ping, so its receive loop runs but the handler is stuck"}},
		},
		{
			name: "an answer recorded before the injected request it answers",
			build: func(b *tb) {
				b.reply(`"inj-1"`)
				m := wire.Classify([]byte(`{"jsonrpc":"2.0","id":"inj-1","method":"ping"}` + "\n"))
				e := wire.Event{Type: wire.EventInjected, Fault: "inject#1"}
				e.SetMessage(wire.ToServer, &m)
				b.at(2).add(e)
				b.at(200).finish()
			},
		},
		{
			name: "an unknown answer is not excused by a request injected much later",
			build: func(b *tb) {
				b.reply(`"inj-1"`)
				m := wire.Classify([]byte(`{"jsonrpc":"2.0","id":"inj-1","method":"ping"}` + "\n"))
				e := wire.Event{Type: wire.EventInjected, Fault: "inject#1"}
				e.SetMessage(wire.ToServer, &m)
				b.at(1500).reply("5") // settles the first suspect
				b.add(e)
				b.at(3000).finish()
			},
			want: []short{{Kind: reports.KindUnknownResponse, Severity: reports.SeverityError, Request: &reports.Request{ID: `"inj-1"`}, Seqs: seqs(3, 5),
				Message: `the server sent 2 answers for ids never requested ("inj-1", 5)`}},
		},
		{
			name: "a request still open when the transcript ends early is indeterminate",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(1000).stderr("working")
			},
			notes:   []string{"tools/call (id 1) unanswered when the transcript ends, before the deadline"},
			unknown: []string{"no session-end event"},
		},
		{
			name: "a line too long to classify may have been the answer",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).add(wire.Event{Type: wire.EventReceived, Dir: "s2c", Kind: "invalid", Problem: "line longer than the 64-byte cap, piece 1", Raw: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"aaaa`})
				b.at(10000).finish()
			},
			notes: []string{"tools/call (id 1) unanswered, but the server wrote a line too long to classify after the request"},
		},
		{
			name: "an answer with a wrong jsonrpc version answers, and breaks the protocol",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.replyRaw(`{"jsonrpc":"1.0","id":1,"result":{"content":[]}}`)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Seqs: seqs(5),
				Message: `a message with a wrong or missing "jsonrpc" version (it must be "2.0") (1 frame from the server)`}},
		},
	})
}

// TestJudgeClientPeer points the server's request checks (a request overdue
// past the deadline is a hang) at the client: requests travel s2c to it and
// its answers c2s. Role "client" judges the client program differently
// (client_test.go); this keeps the shared checks peer-agnostic.
func TestJudgeClientPeer(t *testing.T) {
	b := newTB()
	s := b.recv("s2c", `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`)
	b.fwd("s2c", s)
	s = b.recv("s2c", `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}`)
	b.fwd("s2c", s)
	b.at(10).replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`) // s2c: not the client's answer
	r := b.at(20).recv("c2s", `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`)
	b.fwd("c2s", r)
	b.at(10000).end("the client closed its output")
	j := newJudger(clientPeer)
	for _, e := range b.evs {
		j.Add(e)
	}
	want := []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "sampling/createMessage"), Seqs: seqs(5, 6),
		Message: "sampling/createMessage (id 1) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"}}
	if diff := cmp.Diff(want, shorten(j.Findings())); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}
