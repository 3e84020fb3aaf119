package judge

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// newHorizonTB is a client under test with a 30 s deadline and a 2 min hang
// horizon, as test-client runs one by default.
func newHorizonTB(expect string) func() *tb {
	return func() *tb {
		b := &tb{client: true}
		seed := testSeed
		b.add(wire.Event{Type: wire.EventSession, Seed: &seed, Command: []string{"mcpchaos", "serve"},
			Scenario: testScenario, Role: "client", Expect: expect, DeadlineMS: 30000, HangAfterMS: 120000, GraceMS: 3000, Repro: clientRepro})
		b.add(wire.Event{Type: wire.EventProcessStarted, Peer: "client", PID: 100, Command: []string{"node", "client.mjs"}})
		b.add(wire.Event{Type: wire.EventProcessStarted, PID: 42, Command: []string{"mcpchaos", "serve"}})
		return b
	}
}

// sse is a server message received in an SSE event of exchange 2, with
// event id eventID ("" for none).
func (b *tb) sse(raw, eventID string) int64 {
	m := wire.Classify([]byte(raw))
	e := wire.Event{Type: wire.EventReceived, Exchange: 2, EventID: eventID}
	e.SetMessage(wire.ToClient, &m)
	return b.add(e)
}

// TestJudgeClientPastItsDeadline grades a client still running at its
// deadline: one that fails at a timeout of its own before the hang horizon
// is late (a warning that says what it could have known sooner), one still
// running at the horizon is hung, and one whose shutdown ladder was seen
// under way is neither.
func TestJudgeClientPastItsDeadline(t *testing.T) {
	// The TypeScript SDK 1.16.0 under result-stream-cut: the stream that
	// would carry the call's answer is cut with no event id to resume from,
	// and the SDK fails the call at its 60 s default request timeout.
	sdkTimeout := []string{
		"file:///app/node_modules/@modelcontextprotocol/sdk/dist/esm/shared/protocol.js:282",
		"                const timeoutHandler = () => cancel(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout }));",
		"                                                   ^",
		"",
		"McpError: MCP error -32001: Request timed out",
		"    at Timeout.timeoutHandler [as _onTimeout] (file:///app/node_modules/@modelcontextprotocol/sdk/dist/esm/shared/protocol.js:282:52)",
		"",
		"Node.js v20.20.2",
	}
	runCasesFrom(t, newHorizonTB(expectFailure), clientRepro, []judgeCase{
		{
			name: "it fails the cut call at its SDK's own 60s timeout: late",
			build: func(b *tb) {
				b.call("1", "tools/call")
				seq := b.at(2500).sse(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "")
				b.drop("s2c", seq, "the client's stream was cut by fault eof#1 before this message")
				id := b.at(30000).cprobe(1)
				b.cprobeAnswer(id)
				b.at(60300).cstderr(sdkTimeout...)
				b.cexit(1)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityWarning, Request: req("1", "tools/call"), Seqs: seqs(4, 7, 9, 19),
				Message: "the client exited with status 1 on its own only 1m0.3s after it started, past its 30s deadline but before its 2m0s hang horizon: late, not hung; " +
					"its last request, tools/call (id 1), could not be answered from 2.5s on (the client's stream was cut by fault eof#1 before this message); " +
					"the server had sent the answer in an event with no id, so no resumption could bring it back: it could have failed the call then, 57.8s sooner; " +
					"it answered a liveness ping past its deadline, so its receive loop ran while it waited"}},
			notes: []string{"the client ended on its SDK's error for a failed call, McpError: MCP error -32001: Request timed out, uncaught, and exited with status 1: the failure the scenario expects, not a crash"},
		},
		{
			name: "the cut stream could have been resumed: it says so",
			build: func(b *tb) {
				b.call("1", "tools/call")
				seq := b.at(2500).sse(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "ev-7")
				b.drop("s2c", seq, "the client's stream was cut by fault eof#1 before this message")
				b.at(60300).cexit(1)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityWarning, Request: req("1", "tools/call"), Seqs: seqs(4, 7, 8),
				Message: "the client exited with status 1 on its own only 1m0.3s after it started, past its 30s deadline but before its 2m0s hang horizon: late, not hung; " +
					"its last request, tools/call (id 1), could not be answered from 2.5s on (the client's stream was cut by fault eof#1 before this message); " +
					"the server had sent the answer in an event with an id: it could have resumed the stream with Last-Event-ID (MCP 2025-11-25, Streamable HTTP › Resumability and Redelivery), or failed the call then, 57.8s sooner"}},
		},
		{
			name: "it is still waiting at the hang horizon: hung",
			build: func(b *tb) {
				b.call("1", "tools/call")
				id := b.at(30000).cprobe(1)
				b.cprobeAnswer(id)
				b.at(120000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 6, 7, 9, 10),
				Message: "the client had not exited by its 2m0s hang horizon (mcpchaos sent it SIGTERM), 1m30s past its 30s deadline: no request timeout of its own ended the wait; " +
					"its last request, tools/call (id 1), was never answered, so it waits for the server; it answered a liveness ping, so its receive loop runs"}},
		},
		{
			name: "the transcript ends between its deadline and its horizon: unknown",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(60000).cstderr("still waiting")
			},
			unknown: []string{"the transcript has no session-end event", "the transcript ends 1m0s after the client started, past its 30s deadline but before its 2m0s hang horizon, and it had not exited"},
		},
	})
}

// TestJudgeClientEscalationSeen: escalation seen is escalation done. A
// client under linger that signals its server end and then exits passes,
// however near its deadline the ladder's waits bring it.
func TestJudgeClientEscalationSeen(t *testing.T) {
	runCasesFrom(t, newHorizonTB(expectSuccess), clientRepro, []judgeCase{{
		name: "SIGTERM seen, then the client's SIGKILL ends wrap, and it exits past its deadline",
		build: func(b *tb) {
			b.lingerFault("ignore the client's EOF and SIGTERM/SIGINT until killed")
			b.call("1", "tools/call")
			b.reply("1")
			b.at(27000).pipe(wire.PipeClientInput, "end of file", false)
			b.lingerFault("ignored (the client closed its output): the linger lasts until mcpchaos is killed")
			b.at(29000).lingerFault("ignored (mcpchaos got SIGTERM): the linger lasts until mcpchaos is killed")
			b.at(31000).cexit(0)
		},
		notes: []string{"the client exited 31s after it started, past its 30s deadline, having escalated its server's shutdown"},
	}})
}
