package judge

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
)

// Requests mcpchaos injects (faults server-request, early-request) carry ids
// starting with wire.InjectIDPrefix. The relay swallows their answers, so
// the other peer never sees them; the receiver owes an answer all the same.

const (
	injectID    = `"mcpchaos-inject-1"`
	earlyListed = `{"jsonrpc":"2.0","id":"mcpchaos-inject-1","method":"tools/list","params":{}}`
	toolsAnswer = `{"jsonrpc":"2.0","id":"mcpchaos-inject-1","result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`
	badTools    = `{"jsonrpc":"2.0","id":"mcpchaos-inject-1","result":{}}`
	swallowed   = "the answer to a request injected by fault early-request#1"
)

// inject records a frame a fault wrote toward dir's receiver.
func (b *tb) inject(dir, fault, raw string) int64 {
	return b.injectTruncated(dir, fault, raw+"\n")
}

// swallow is the peer answering an injected request; the relay drops it.
func (b *tb) swallow(dir, raw, why string) int64 {
	seq := b.recv(dir, raw)
	b.drop(dir, seq, why)
	return seq
}

func TestInjectedRequestsToTheServer(t *testing.T) {
	runJudgeCases(t, []judgeCase{
		{
			name: "answered, and the answer swallowed: nothing to report",
			build: func(b *tb) {
				b.inject("c2s", "early-request#1", earlyListed)
				b.at(10).swallow("s2c", toolsAnswer, swallowed)
				b.at(100).finish()
			},
		},
		{
			name: "unanswered past the deadline: the server's hang",
			build: func(b *tb) {
				b.inject("c2s", "early-request#1", earlyListed)
				b.at(10000).finish()
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req(injectID, "tools/list"), Seqs: seqs(3),
				Message: `tools/list (id "mcpchaos-inject-1") injected by fault early-request#1 unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown`}},
		},
		{
			name: "the server exits with it unanswered: a lost response",
			build: func(b *tb) {
				b.inject("c2s", "early-request#1", earlyListed)
				b.at(100).stdoutEOF()
				b.exit(0)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityError, Request: req(injectID, "tools/list"), Seqs: seqs(3, 4),
				Message: `tools/list (id "mcpchaos-inject-1") injected by fault early-request#1 left unanswered: the server closed its stdout and exited with status 0`}},
		},
		{
			name: "the answer is checked against the request's method",
			build: func(b *tb) {
				b.inject("c2s", "early-request#1", earlyListed)
				b.at(10).swallow("s2c", badTools, swallowed)
				b.at(100).finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req(injectID, "tools/list"), Seqs: seqs(4),
				Message: "1 result of tools/list breaks the MCP 2025-11-25 schema: /result: missing property 'tools'"}},
		},
		{
			// The relay records an injected frame after writing it; a fast
			// server's answer can be recorded first.
			name: "an answer recorded before its request is still checked, and not unknown",
			build: func(b *tb) {
				b.swallow("s2c", badTools, swallowed)
				b.inject("c2s", "early-request#1", earlyListed)
				b.at(100).finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req(injectID, "tools/list"), Seqs: seqs(3),
				Message: "1 result of tools/list breaks the MCP 2025-11-25 schema: /result: missing property 'tools'"}},
		},
		{
			name: "answered twice: a duplicate",
			build: func(b *tb) {
				b.inject("c2s", "early-request#1", earlyListed)
				b.at(10).swallow("s2c", toolsAnswer, swallowed)
				b.at(11).swallow("s2c", toolsAnswer, swallowed)
				b.at(100).finish()
			},
			want: []short{{Kind: reports.KindDuplicateResponse, Severity: reports.SeverityError, Request: req(injectID, "tools/list"), Seqs: seqs(4, 6),
				Message: `the server answered tools/list (id "mcpchaos-inject-1") more than once`}},
		},
		{
			name: "an answer to an id of ours never injected is unknown",
			build: func(b *tb) {
				b.swallow("s2c", toolsAnswer, "the answer to a request injected of mcpchaos")
				b.at(100).finish()
			},
			want: []short{{Kind: reports.KindUnknownResponse, Severity: reports.SeverityError, Request: req(injectID, ""), Seqs: seqs(3),
				Message: `the server answered id "mcpchaos-inject-1", which was never requested`}},
		},
		{
			name: "a call cancelled by fault cancel needs no answer",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.inject("c2s", "cancel#1", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"mcpchaos fault cancel"}}`)
				b.at(10000).finish()
			},
		},
		{
			name: "a call cancelled by fault cancel may still be answered, once",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.inject("c2s", "cancel#1", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"mcpchaos fault cancel"}}`)
				b.at(50).reply("1")
				b.at(100).finish()
			},
		},
		{
			// on=s2c:response:tools/call,position=before: the answer is
			// received, then the cancellation goes to the server, then the
			// answer reaches the client.
			name: "a cancellation just before the response is forwarded changes nothing",
			build: func(b *tb) {
				b.call("1", "tools/call")
				s := b.at(50).recv("s2c", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
				b.inject("c2s", "cancel#1", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"mcpchaos fault cancel"}}`)
				b.fwd("s2c", s)
				b.at(100).finish()
			},
		},
	})
}

func TestInjectedRequestsToTheClient(t *testing.T) {
	const roots = `{"jsonrpc":"2.0","id":"mcpchaos-inject-1","method":"roots/list"}`
	const why = "the answer to a request injected by fault server-request#1"
	runCasesFrom(t, newClientTB(expectSuccess), clientRepro, []judgeCase{
		{
			name: "the client answers: nothing to report",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.inject("s2c", "server-request#1", roots)
				b.at(10).swallow("c2s", `{"jsonrpc":"2.0","id":"mcpchaos-inject-1","result":{"roots":[]}}`, why)
				b.at(20).reply("1")
				b.at(30).cexit(0)
				b.clientDone(0)
			},
		},
		{
			name: "the client answers with an error: that is an answer",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.inject("s2c", "server-request#1", roots)
				b.at(10).swallow("c2s", `{"jsonrpc":"2.0","id":"mcpchaos-inject-1","error":{"code":-32601,"message":"Method not found"}}`, why)
				b.at(20).reply("1")
				b.at(30).cexit(0)
				b.clientDone(0)
			},
		},
		{
			name: "the client exits without answering: a lost response",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.inject("s2c", "server-request#1", roots)
				b.at(20).reply("1")
				b.at(30).cexit(0)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityError, Request: req(injectID, "roots/list"), Seqs: seqs(6, 9),
				Message: `roots/list (id "mcpchaos-inject-1") injected by fault server-request#1 left unanswered: the client exited with status 0`}},
		},
	})
}

// A client whose call fault cancel cancelled toward the server, and that
// then waits for ever: still the client's hang (a client must not wait
// without a deadline), said as what it is.
func TestClientHangOnACallCancelledByAFault(t *testing.T) {
	runClientCases(t, expectSuccess, []judgeCase{
		{
			name: "cancelled and never answered",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.inject("c2s", "cancel#1", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"mcpchaos fault cancel"}}`)
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 7, 8),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 1), was cancelled toward the server by fault cancel#1 and never answered (the spec lets a server leave a cancelled request unanswered), so it waits for an answer that may never come; no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
		},
		{
			name: "cancelled, answered all the same, and the client exits",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.inject("c2s", "cancel#1", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"mcpchaos fault cancel"}}`)
				b.at(50).reply("1")
				b.at(60).cexit(0)
				b.clientDone(0)
			},
		},
	})
}
