package judge

import (
	"fmt"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Transcripts of the id faults (id-type, id-collision), recorded as the relay
// does: the fault event, before the write, carries the id the receiver gets;
// the forwarded event of a rewritten frame carries the bytes written.

// idFault is an id fault deciding to send the request received as of on
// under id.
func (b *tb) idFault(action, dir string, of int64, id string) int64 {
	return b.add(wire.Event{Type: wire.EventFault, Fault: action + "#1", Spec: action, Action: action, Dir: dir, Of: of, ID: id,
		Detail: "send the request on with id " + id})
}

// fwdAs is the forwarded event of a frame rewritten on its way.
func (b *tb) fwdAs(dir string, of int64, raw, detail string) int64 {
	m := wire.Classify([]byte(raw + "\n"))
	e := wire.Event{Type: wire.EventForwarded, Of: of, Detail: detail}
	e.SetMessage(dirOf(dir), &m)
	return b.add(e)
}

func callRaw(id, method string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":{}}`, id, method)
}

func replyRawOf(id string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id)
}

// retyped is a tools/call with id 1 that id-type sends on as "1"; it
// returns the received seq (3; the fault is 4, the forwarded event 5).
func (b *tb) retyped() int64 {
	seq := b.recv("c2s", callRaw("1", "tools/call"))
	b.idFault("id-type", "c2s", seq, `"1"`)
	b.fwdAs("c2s", seq, callRaw(`"1"`, "tools/call"), "rewritten by fault id-type#1")
	return seq
}

// translated is the server's answer with id from, forwarded as id to.
func (b *tb) translated(from, to string) int64 {
	seq := b.recv("s2c", replyRawOf(from))
	b.fwdAs("s2c", seq, replyRawOf(to), "id "+from+" translated back to "+to)
	return seq
}

// collided is a tools/call with id 2 that id-collision sends on as 1, the
// id of a request in flight; it returns the received seq.
func (b *tb) collided() int64 {
	seq := b.recv("c2s", callRaw("2", "tools/call"))
	b.idFault("id-collision", "c2s", seq, "1")
	b.fwdAs("c2s", seq, callRaw("1", "tools/call"), "rewritten by fault id-collision#1")
	return seq
}

func TestJudgeIDFaults(t *testing.T) {
	runJudgeCases(t, []judgeCase{
		{
			name: "id-type: the server answers the id it got, which goes back translated",
			build: func(b *tb) {
				b.retyped()
				b.at(100).translated(`"1"`, "1")
				b.at(200).finish()
			},
		},
		{
			name: "id-type: an answer recorded before the forwarded event is the answer",
			build: func(b *tb) {
				seq := b.recv("c2s", callRaw("1", "tools/call"))
				b.idFault("id-type", "c2s", seq, `"1"`)
				b.translated(`"1"`, "1")
				b.fwdAs("c2s", seq, callRaw(`"1"`, "tools/call"), "rewritten by fault id-type#1")
				b.at(200).finish()
			},
		},
		{
			name: "id-type: an answer with the wrong id type is unknown, and the request hangs",
			build: func(b *tb) {
				b.retyped()
				b.at(100).reply("1")
				b.at(10000).finish()
			},
			want: []short{
				{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req(`"1"`, "tools/call"), Seqs: seqs(3, 5),
					Message: `tools/call (id "1") unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown`},
				{Kind: reports.KindUnknownResponse, Severity: reports.SeverityError, Request: req("1", ""), Seqs: seqs(6),
					Message: "the server answered id 1, which was never requested"},
			},
		},
		{
			name: "id-type: the wrong id type, then the server exits: a lost response",
			build: func(b *tb) {
				b.retyped()
				b.at(100).reply("1")
				b.at(200).stdoutEOF()
				b.exit(0)
				b.end("the server exited")
			},
			want: []short{
				{Kind: reports.KindLostResponse, Severity: reports.SeverityError, Request: req(`"1"`, "tools/call"), Seqs: seqs(3, 5, 8),
					Message: `tools/call (id "1") left unanswered: the server closed its stdout and exited with status 0`},
				{Kind: reports.KindUnknownResponse, Severity: reports.SeverityError, Request: req("1", ""), Seqs: seqs(6),
					Message: "the server answered id 1, which was never requested"},
			},
		},
		{
			name: "id-type: a cancellation translated to the id the server got lets it leave the request unanswered",
			build: func(b *tb) {
				b.retyped()
				seq := b.at(10).recv("c2s", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
				b.fwdAs("c2s", seq, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1"}}`, "requestId 1 translated")
				b.at(10000).finish()
			},
		},
		{
			name: "id-collision: two answers for two requests under one id are both owed",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).collided()
				b.at(100).reply("1")
				b.at(110).translated("1", "2")
				b.at(200).finish()
			},
		},
		{
			name: "id-collision: an answer recorded before the colliding request's forwarded event",
			build: func(b *tb) {
				b.call("1", "tools/call")
				seq := b.at(10).recv("c2s", callRaw("2", "tools/call"))
				b.idFault("id-collision", "c2s", seq, "1")
				b.at(11).reply("1")
				b.translated("1", "2")
				b.fwdAs("c2s", seq, callRaw("1", "tools/call"), "rewritten by fault id-collision#1")
				b.at(200).finish()
			},
		},
		{
			// server-everything 2026.8.31 over stdio, explore's
			// id-collision:on=c2s:request:tasks/cancel,nth=1: the task's
			// cancellation, which borrowed the id of a tool call in
			// flight, was answered first. Held to the tool call's schema,
			// its result "has no content array".
			name: "id-collision: the server answers the two requests under one id in the other order",
			build: func(b *tb) {
				b.call("38", "tools/call")
				seq := b.at(10).recv("c2s", `{"jsonrpc":"2.0","id":42,"method":"tasks/cancel","params":{"taskId":"t1"}}`)
				b.idFault("id-collision", "c2s", seq, "38")
				b.fwdAs("c2s", seq, `{"jsonrpc":"2.0","id":38,"method":"tasks/cancel","params":{"taskId":"t1"}}`, "rewritten by fault id-collision#1")
				task := `"result":{"taskId":"t1","status":"cancelled","ttl":300000,"createdAt":"2026-11-28T04:30:30.600Z","lastUpdatedAt":"2026-11-28T04:30:30.700Z"}`
				b.at(100).replyRaw(`{"jsonrpc":"2.0","id":38,` + task + `}`)
				seq = b.at(110).recv("s2c", replyRawOf("38"))
				b.fwdAs("s2c", seq, replyRawOf("42"), "id 38 translated back to 42")
				b.at(200).finish()
			},
		},
		{
			// go-sdk v1.8.0 drops a request whose id is in flight, by
			// design (jsonrpc2 "request ID already in use"), and so does
			// the planted id-keyed: the client broke the base protocol's
			// MUST NOT first, so a warning, not a hang.
			name: "id-collision: answered once, the other request under the id is left unanswered",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).collided()
				b.at(100).reply("1")
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityWarning, Request: req("1", "tools/call"), Seqs: seqs(5, 7, 8),
				Message: "tools/call (id 1) unanswered after 5s, while the server answered the other request under id 1 (seq 8): the client must not reuse an id in flight, and a server may refuse to run a second request under an id it holds, but one that drops it without an error leaves the call waiting forever"}},
		},
		{
			// Two open requests under one id with no fault behind them are
			// two sessions' over one proxy, each numbering from 1: the one
			// left unanswered is a hang, not a refused reuse.
			name: "two requests under one id without a fault: the unanswered one hangs",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).call("1", "tools/call")
				b.at(100).reply("1")
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(5, 6),
				Message: "tools/call (id 1) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"}},
		},
		{
			// The request whose id was taken was the client's to send:
			// neither answered is a hang of both.
			name: "id-collision: neither request under the id answered, both hang",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).collided()
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 5),
				Message: "2 tools/call requests (ids 1, 1) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"}},
		},
		{
			name: "id-collision: a third answer is a duplicate",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).collided()
				b.at(100).reply("1")
				b.at(110).translated("1", "2")
				b.at(120).reply("1")
				b.at(200).finish()
			},
			want: []short{{Kind: reports.KindDuplicateResponse, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(10, 12),
				Message: "the server answered tools/call (id 1) more than once"}},
		},
	})
}

func TestJudgeClientIDFaults(t *testing.T) {
	runClientCases(t, expectSuccess, []judgeCase{
		{
			name: "id-type: the translated answer reached the client",
			build: func(b *tb) {
				b.retyped()
				b.at(10).translated(`"1"`, "1")
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 7, 9, 10),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 1), was answered, so it received the answer but is stuck; no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
		},
		{
			name: "id-collision: the second answer reached the colliding request",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(5).collided()
				b.at(10).reply("1")
				b.at(11).translated("1", "2")
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("2", "tools/call"), Seqs: seqs(6, 11, 13, 14),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 2), was answered, so it received the answer but is stuck; no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
		},
		{
			name: "id-type: the server's wrong-typed answer reaches the client untranslated",
			build: func(b *tb) {
				b.retyped()
				b.at(10).reply("1")
				b.at(40).clientDone(0)
				b.at(50).cexit(0)
			},
		},
	})
}
