package judge

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	goldenfile "github.com/mcpchaos/mcpchaos/internal/golden"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// A client-role transcript, as mcpchaos test-client records one: the wrap
// process between the client program and the server (c2s is what the client
// wrote), merged with the runner's events about the client program, which
// carry peer "client". Seqs in these tables: 1 is the session event, 2 the
// client program's start, 3 the server's, so the first frame is 4.

const clientRepro = "mcpchaos test-client --scenario sc --seed 7 -- python client.py"

// newClientTB starts a transcript of a client under test that must end in
// expect, with a 10 s deadline.
func newClientTB(expect string) func() *tb {
	return func() *tb {
		b := &tb{client: true}
		seed := testSeed
		b.add(wire.Event{Type: wire.EventSession, Seed: &seed, Command: []string{"mcpchaos", "serve"},
			Scenario: testScenario, Role: "client", Expect: expect, DeadlineMS: 10000, GraceMS: 3000, Repro: clientRepro})
		b.add(wire.Event{Type: wire.EventProcessStarted, Peer: "client", PID: 100, Command: []string{"python", "client.py"}})
		b.add(wire.Event{Type: wire.EventProcessStarted, PID: 42, Command: []string{"mcpchaos", "serve"}})
		return b
	}
}

// sreq is a request the server sent the client, relayed to it.
func (b *tb) sreq(id, method string) int64 {
	seq := b.recv("s2c", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, id, method))
	b.fwd("s2c", seq)
	return seq
}

// canswer is the client's answer to the server's request id, relayed: a
// result that fits roots/list (no roots) and ping alike.
func (b *tb) canswer(id string) int64 {
	seq := b.recv("c2s", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[]}}`, id))
	b.fwd("c2s", seq)
	return seq
}

// notify relays n notifications of method from the server to the client.
func (b *tb) notify(method string, n int) {
	for range n {
		b.replyRaw(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{}}`, method))
	}
}

// burst is a burst fault injecting n notifications toward the client.
func (b *tb) burst(method string, n int) {
	for i := range n {
		raw := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"progressToken":1,"progress":%d}}`, method, i)
		m := wire.Classify([]byte(raw + "\n"))
		e := wire.Event{Type: wire.EventInjected, Fault: "burst#1"}
		e.SetMessage(wire.ToClient, &m)
		b.add(e)
	}
}

// cprobe is a liveness ping toward the client.
func (b *tb) cprobe(n int) string {
	id := fmt.Sprintf(`%s%d"`, wire.ProbeIDPrefix, n)
	raw := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` + "\n"
	e := wire.Event{Type: wire.EventProbe, Dir: "s2c", ID: id, Method: "ping", Detail: "the client is quiet"}
	e.SetRaw([]byte(raw))
	b.add(e)
	return id
}

// cprobeAnswer is the client answering a probe, swallowed by the relay.
func (b *tb) cprobeAnswer(id string) {
	seq := b.recv("c2s", `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
	b.drop("c2s", seq, "the answer to a liveness probe of mcpchaos")
}

// csignal is the runner signalling the client past its deadline.
func (b *tb) csignal(sig string) int64 {
	return b.add(wire.Event{Type: wire.EventSignal, Peer: "client", Signal: sig, PID: 100, ByUs: true,
		Detail: "the client had not exited by its 10s deadline"})
}

func (b *tb) cexit(code int) int64 {
	return b.add(wire.Event{Type: wire.EventProcessExited, Peer: "client", PID: 100, ExitCode: &code})
}

func (b *tb) ckilled(sig string, byUs bool) int64 {
	return b.add(wire.Event{Type: wire.EventProcessExited, Peer: "client", PID: 100, Signal: sig, ByUs: byUs})
}

func (b *tb) cstderr(lines ...string) {
	for _, l := range lines {
		e := wire.Event{Type: wire.EventStderr, Peer: "client"}
		e.SetRaw([]byte(l + "\n"))
		b.add(e)
	}
}

// clientDone is the client ending the session (six events): it closes its
// output, the relay closes the server's stdin, the server exits with
// serverCode, and the relay closes the client's input.
func (b *tb) clientDone(serverCode int) {
	b.pipe(wire.PipeClientInput, "end of file", false)
	b.clientClosed()
	b.stdoutEOF()
	b.exit(serverCode)
	b.pipe(wire.PipeClientOutput, "the server exited", true)
	b.end("the client closed its output")
}

// serverDies is the server going away under the client (four events): it
// ends its output, the relay closes the client's input, the server exits.
func (b *tb) serverDies(code int) {
	b.stdoutEOF()
	b.pipe(wire.PipeClientOutput, "nothing more can come from the server: its output ended", true)
	b.exit(code)
	b.end("the server exited")
}

func runClientCases(t *testing.T, expect string, cases []judgeCase) {
	t.Helper()
	runCasesFrom(t, newClientTB(expect), clientRepro, cases)
}

func TestJudgeClientNoFindings(t *testing.T) {
	runClientCases(t, expectSuccess, []judgeCase{
		{
			name: "success: every call answered, exits 0",
			build: func(b *tb) {
				b.call("1", "initialize")
				b.at(10).reply("1")
				b.at(20).call("2", "tools/call")
				b.at(30).reply("2")
				b.at(40).clientDone(0)
				b.at(50).cexit(0)
			},
		},
		{
			name: "server requests answered, liveness pings answered, even twice or unrecorded",
			build: func(b *tb) {
				b.sreq("0", "roots/list")
				b.canswer("0")
				id := b.at(5000).cprobe(1)
				b.cprobeAnswer(id)
				b.cprobeAnswer(id)
				b.cprobeAnswer(`"mcpchaos-probe-99"`)
				b.at(6000).clientDone(0)
				b.cexit(0)
			},
		},
		{
			name: "answers to requests mcpchaos injected toward the client are not unknown",
			build: func(b *tb) {
				m := wire.Classify([]byte(`{"jsonrpc":"2.0","id":"inj-1","method":"ping"}` + "\n"))
				e := wire.Event{Type: wire.EventInjected, Fault: "inject#1"}
				e.SetMessage(wire.ToClient, &m)
				b.add(e)
				b.canswer(`"inj-1"`)
				b.clientDone(0)
				b.cexit(0)
			},
		},
		{
			name: "the server's problems are not the client's",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.reply("1")
				b.reply("1")  // a duplicate answer from the server
				b.reply("77") // an answer to nothing
				b.replyRaw("INFO the server logs to stdout")
				b.stderr(pyClosedResource...) // the server's stderr
				m := wire.Classify([]byte("garbage\n"))
				e := wire.Event{Type: wire.EventInjected, Fault: "corrupt#1"}
				e.SetMessage(wire.ToServer, &m)
				b.add(e)
				b.at(100).clientDone(1)
				b.cexit(0)
			},
		},
		{
			name: "a request toward the client that mcpchaos dropped never reached it",
			build: func(b *tb) {
				s := b.recv("s2c", `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`)
				b.drop("s2c", s, "dropped by fault drop#1")
				b.clientDone(0)
				b.cexit(0)
			},
		},
	})
	runClientCases(t, expectFailure, []judgeCase{
		{
			name: "failure: it fails cleanly with status 1 when the server dies",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).serverDies(1)
				b.at(300).cstderr("Error: the connection to the server closed")
				b.cexit(1)
			},
		},
		{
			name: "failure: exit 0 is fine too",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).serverDies(1)
				b.at(300).cexit(0)
			},
		},
		{
			name: "failure: a server request left unanswered after the server went away",
			build: func(b *tb) {
				b.sreq("0", "roots/list")
				b.at(100).serverDies(1)
				b.at(300).cexit(1)
			},
			notes: []string{"the server's roots/list (id 0) was unanswered when the client ended, after the server had gone (server-stdout closed: end of file): nobody was left to answer"},
		},
		{
			name: "failure: SIGPIPE writing to the gone server is a write to the closed transport",
			build: func(b *tb) {
				b.at(100).serverDies(1)
				b.at(300).ckilled("SIGPIPE", false)
			},
			notes: []string{"the client died of SIGPIPE after the server had gone (server-stdout closed: end of file)"},
		},
	})
	runClientCases(t, expectSuccess, []judgeCase{
		{
			name: "success: a failing exit after the server died on its own is the server's failure",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).serverDies(1)
				b.at(300).cexit(1)
			},
			notes: []string{"the client exited with status 1 after the server had gone (server-stdout closed: end of file): the server's failure, not judged"},
		},
		{
			name: "success: a half-close of the client's output excuses a failing exit",
			build: func(b *tb) {
				b.add(wire.Event{Type: wire.EventFault, Fault: "half-close#1", Spec: "half-close:dir=c2s", Action: "half-close"})
				b.pipe(wire.PipeClientInput, "half-closed by fault half-close#1", true)
				b.at(100).cexit(1)
				b.end("the client closed its output")
			},
			notes: []string{"the client exited with status 1 after mcpchaos closed its output (client-stdin closed by mcpchaos: half-closed by fault half-close#1)"},
		},
		{
			name: "success: the server going away because the client stopped reading excuses nothing",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.add(wire.Event{Type: wire.EventError, Dir: "s2c", Pipe: wire.PipeClientOutput, Detail: "writing to client-stdout failed: broken pipe"})
				b.pipe(wire.PipeServerInput, "the client stopped reading its input", true)
				b.stdoutEOF()
				b.exit(0)
				b.pipe(wire.PipeClientOutput, "the server exited", true)
				b.end("the server exited")
				b.at(100).cexit(3)
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "exit:3", Seqs: seqs(12),
				Message: "the client failed although every call stayed answerable: it exited with status 3, with no crash signature on stderr"}},
		},
		{
			name: "the transcript ends before the deadline with the client running",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(3000).end("interrupted")
			},
			unknown: []string{"the transcript ends 3s after the client started, before its 10s deadline, and it had not exited: whether it hangs is unknown"},
		},
		{
			name: "a stall holding the client's output explains a hang",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).add(wire.Event{Type: wire.EventFault, Fault: "stall#1", Spec: "stall:dir=c2s", Action: "stall", Dir: "c2s", Forever: true})
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.end("the client closed its output")
			},
			unknown: []string{"the client had not exited by its 10s deadline, but a stall fault had stopped mcpchaos reading its output: it may have been blocked writing"},
		},
	})
	runClientCases(t, "", []judgeCase{
		{
			name: "without an expectation the exit status is not judged",
			build: func(b *tb) {
				b.clientDone(0)
				b.cexit(1)
			},
			unknown: []string{`the session does not say what the client must do (expect "", not "success" or "failure"): its exit status 1 was not judged`},
		},
	})
}

func TestJudgeClientHang(t *testing.T) {
	runClientCases(t, expectSuccess, []judgeCase{
		{
			// The SDK's sse_client under a 503 (python-sdk #2110): its call
			// waits for ever, and answering the ping past its deadline
			// raises in its dead write path, so it exits 1 before SIGTERM.
			name: "exited past the deadline only once the ping reached it",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10000).cprobe(1)
				b.at(10200).cexit(1)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 6, 7),
				Message: "the client had not exited by its 10s deadline (it exited only 10.2s after it started, once mcpchaos's liveness probe had reached it); " +
					"its last request, tools/call (id 1), was never answered, so it waits for the server; it exited without answering the liveness ping"}},
		},
		{
			name: "answered the ping, then exited past the deadline: late, not a hang",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.reply("1")
				id := b.at(10000).cprobe(1)
				b.cprobeAnswer(id)
				b.at(10050).cexit(0)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityWarning, Request: req("1", "tools/call"), Seqs: seqs(4, 6, 9, 11),
				Message: "the client exited with status 0 on its own only 10.1s after it started, past its 10s deadline: late, not hung; " +
					"its last request, tools/call (id 1), was answered at 0s: what it waited on after that was its own; it answered a liveness ping past its deadline, so its receive loop ran while it waited"}},
		},
		{
			name: "exited past the deadline with no probe sent: late, not a hang",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10200).cexit(0)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityWarning, Request: req("1", "tools/call"), Seqs: seqs(4, 6),
				Message: "the client exited with status 0 on its own only 10.2s after it started, past its 10s deadline: late, not hung; " +
					"its last request, tools/call (id 1), was never answered"}},
		},
		{
			name: "killed at the deadline, pings answered: it waits for the server",
			build: func(b *tb) {
				b.call("1", "tools/call")
				id := b.at(5000).cprobe(1)
				b.cprobeAnswer(id)
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 6, 7, 9, 10),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 1), was never answered, so it waits for the server; it answered a liveness ping, so its receive loop runs"}},
		},
		{
			name: "the list_changed deadlock: the answer was delivered, pings unanswered",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).notify("notifications/tools/list_changed", 1)
				b.at(101).call("2", "tools/list")
				b.at(102).replyRaw(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
				b.at(103).reply("1")
				b.at(5000).cprobe(1)
				b.at(7000).cprobe(2)
				b.at(10000).csignal("SIGTERM")
				b.at(13000).csignal("SIGKILL")
				b.ckilled("SIGKILL", true)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("2", "tools/list"), Seqs: seqs(6, 8, 10, 15, 16, 17, 18),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM, then SIGKILL); " +
					"its last request, tools/list (id 2), sent after notifications/tools/list_changed, was answered, so it received the answer but is stuck; " +
					"2 liveness pings unanswered: its receive loop is stuck, typically in a handler that awaits a request whose answer only that loop can deliver"}},
		},
		{
			name: "it went quiet after a burst of 20 progress notifications",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).burst("notifications/progress", 20)
				b.at(5000).cprobe(1)
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 6, 26, 27, 28),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); it went quiet after 20 notifications/progress; " +
					"its last request, tools/call (id 1), was never answered, so it waits for the server; liveness ping unanswered: its receive loop is stuck"}},
		},
		{
			name: "an answered request is not what a later burst is sent after",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).notify("notifications/progress", 3)
				b.at(20).reply("1")
				b.at(30).call("2", "tools/call")
				b.at(40).notify("notifications/message", 2)
				b.at(50).reply("2")
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("2", "tools/call"), Seqs: seqs(14, 16, 20, 22, 23),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); it went quiet after 2 notifications/message; " +
					"its last request, tools/call (id 2), was answered, so it received the answer but is stuck; no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
			unknown: []string{"no session-end event"},
		},
		{
			name: "pings answered, then not: its receive loop stopped",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.reply("1")
				id := b.at(2000).cprobe(1)
				b.cprobeAnswer(id)
				b.at(4000).notify("notifications/resources/updated", 1)
				b.at(6000).cprobe(2)
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 6, 11, 13, 14, 15),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); it went quiet after notifications/resources/updated; " +
					"its last request, tools/call (id 1), was answered, so it received the answer but is stuck; " +
					"it answered 1 of 2 liveness pings but not the last: its receive loop stopped, typically in a handler that awaits a request whose answer only that loop can deliver"}},
		},
		{
			name: "no signal: still running when the transcript ends past the deadline",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.reply("1")
				b.at(12000).end("interrupted")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 6),
				Message: "the client had not exited by its 10s deadline (it was still running when the transcript ends, 12s after it started); " +
					"its last request, tools/call (id 1), was answered, so it received the answer but is stuck; no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
		},
		{
			name: "a server request unanswered when we killed the client is the hang's",
			build: func(b *tb) {
				b.sreq("0", "roots/list")
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Seqs: seqs(4, 6, 7),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); it went quiet after a roots/list request; " +
					"it had sent the server no request; it never answered the server's roots/list (id 0); no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
		},
		{
			name: "a traceback after our SIGTERM is not judged; the hang is",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10000).csignal("SIGINT")
				b.cstderr(pyClosedResource...)
				b.cexit(1)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 6, 11),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGINT); its last request, tools/call (id 1), was never answered, so it waits for the server; " +
					"no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
			notes: []string{"the client printed python:ClosedResourceError after mcpchaos signalled it (sent SIGINT to the client: the client had not exited by its 10s deadline): not judged as a crash"},
		},
		{
			name: "it ended the session but did not exit",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.reply("1")
				b.at(1000).clientDone(0)
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 6, 8, 14, 15),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 1), was answered, so it received the answer but is stuck; " +
					"it had closed its output to the server at 1s but did not exit"}},
		},
		{
			name: "an answer mcpchaos dropped on its way to the client",
			build: func(b *tb) {
				b.call("1", "tools/call")
				s := b.recv("s2c", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
				b.drop("s2c", s, "dropped by fault drop#1")
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 8, 9),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 1), was answered, but mcpchaos dropped the answer (dropped by fault drop#1), " +
					"so it waits for an answer that cannot come; no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
		},
		{
			name: "an answer held back by a stall toward the client",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.add(wire.Event{Type: wire.EventFault, Fault: "stall#1", Spec: "stall:dir=s2c", Action: "stall", Dir: "s2c", Forever: true})
				b.recv("s2c", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 8, 9),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 1), was answered, but the answer had not reached it yet, so it waits for it; " +
					"no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
		},
		{
			name: "a request mcpchaos dropped on its way to the server",
			build: func(b *tb) {
				s := b.recv("c2s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`)
				b.drop("c2s", s, "dropped by fault drop#1")
				b.at(10000).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(4, 6, 7),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 1), never reached the server (mcpchaos dropped it: dropped by fault drop#1), " +
					"so it waits for an answer that cannot come; no liveness ping was sent to it, so whether its receive loop runs is unknown"}},
			unknown: []string{"no session-end event"},
		},
	})
	runClientCases(t, expectFailure, []judgeCase{
		{
			name: "failure: its input ended and it did not fail",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.call("2", "tools/call")
				b.at(100).serverDies(1)
				b.at(5000).cprobe(1) // cannot reach it: its input is closed
				b.at(10100).csignal("SIGTERM")
				b.ckilled("SIGTERM", true)
			},
			want: []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("2", "tools/call"), Seqs: seqs(6, 9, 13, 14),
				Message: "the client had not exited by its 10s deadline (mcpchaos sent it SIGTERM); its last request, tools/call (id 2), was never answered, so it waits for the server (1 earlier request unanswered too); " +
					"its input had ended at 100ms (nothing more can come from the server: its output ended) and it did not fail"}},
		},
	})
}

func TestJudgeClientFindings(t *testing.T) {
	runClientCases(t, expectSuccess, []judgeCase{
		{
			// The SDK caught it (Python's streamable HTTP reader logs "Error
			// parsing SSE message" for a message after the session closed):
			// the client did its work, a task of its transport failed.
			name: "crash warning: a traceback on stderr, then exit 0 on its own",
			build: func(b *tb) {
				b.clientDone(0)
				b.cstderr(pyClosedResource...)
				b.cexit(0)
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "python:ClosedResourceError", Seqs: seqs(10, 14),
				Message: "Python exception anyio.ClosedResourceError on stderr; the client exited with status 0 on its own: its SDK caught the exception, but a task of its transport failed"}},
		},
		{
			// server-everything's resumed GET stream replays its priming
			// event stored as {}; the Python SDK 2.3.0 logs the pydantic
			// ValidationError and goes on: the server's fault, reported.
			name: "no finding: a traceback after the server sent a frame that is not a message, then exit 0",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.reply("1")
				b.replyRaw(`{}`)
				b.cstderr(pyClosedResource...)
				b.clientDone(0)
				b.cexit(0)
			},
			notes: []string{"the client logged Python exception anyio.ClosedResourceError after the server had sent it a frame that is not a valid JSON-RPC message (seq 8: {}), and then exited 0 on its own: its SDK reporting the server's fault, not a crash"},
		},
		{
			// Its stderr is read apart from its exit: a traceback may be
			// recorded after the exit it came before.
			name: "crash warning: the traceback recorded after the exit 0",
			build: func(b *tb) {
				b.clientDone(0)
				b.cexit(0)
				b.cstderr(pyClosedResource...)
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "python:ClosedResourceError", Seqs: seqs(11, 10),
				Message: "Python exception anyio.ClosedResourceError on stderr; the client exited with status 0 on its own: its SDK caught the exception, but a task of its transport failed"}},
		},
		{
			name: "crash: a non-zero exit although every call stayed answerable",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.reply("1")
				b.clientDone(0)
				b.cexit(1)
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "exit:1", Seqs: seqs(14),
				Message: "the client failed although every call stayed answerable: it exited with status 1, with no crash signature on stderr"}},
		},
		{
			name: "crash: an exception group from a real client",
			build: func(b *tb) {
				b.clientDone(0)
				b.cstderr(readLines(t, "python_two_leaves_group.txt")...)
				b.cexit(1)
			},
			want: []short{
				{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ClosedResourceError", Seqs: seqs(10, 10+int64(len(readLines(t, "python_two_leaves_group.txt")))),
					Message: "Python exception anyio.ClosedResourceError on stderr; the client exited with status 1"},
				{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:RuntimeError:dictionary changed size during iteration", Seqs: seqs(10, 10+int64(len(readLines(t, "python_two_leaves_group.txt")))),
					Message: "Python exception RuntimeError: dictionary changed size during iteration on stderr; the client exited with status 1"},
			},
		},
		{
			name: "lost-response: a server request unanswered when the client exits",
			build: func(b *tb) {
				b.sreq("0", "roots/list")
				b.call("1", "tools/call")
				b.reply("1")
				b.at(100).clientDone(0)
				b.cexit(0)
			},
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityError, Request: req("0", "roots/list"), Seqs: seqs(4, 5, 10),
				Message: "roots/list (id 0) left unanswered: the client closed its output to the server and exited with status 0"}},
		},
		{
			name: "lost-response: several server requests are one finding per method",
			build: func(b *tb) {
				b.sreq("0", "sampling/createMessage")
				b.sreq("1", "sampling/createMessage")
				b.at(100).cexit(0)
				b.clientDone(0)
			},
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityError, Request: req("0", "sampling/createMessage"), Seqs: seqs(4, 5, 8, 6),
				Message: "2 sampling/createMessage requests (ids 0, 1) left unanswered: the client exited with status 0"}},
		},
		{
			name: "duplicate-response: the client answers a server request twice",
			build: func(b *tb) {
				b.sreq("0", "roots/list")
				b.canswer("0")
				b.canswer("0")
				b.clientDone(0)
				b.cexit(0)
			},
			want: []short{{Kind: reports.KindDuplicateResponse, Severity: reports.SeverityError, Request: req("0", "roots/list"), Seqs: seqs(6, 8),
				Message: "the client answered roots/list (id 0) more than once"}},
		},
		{
			name: "unknown-response: the client answers an id the server never used",
			build: func(b *tb) {
				b.canswer("9")
				b.clientDone(0)
				b.cexit(0)
			},
			want: []short{{Kind: reports.KindUnknownResponse, Severity: reports.SeverityError, Request: &reports.Request{ID: "9"}, Seqs: seqs(4),
				Message: "the client answered id 9, which was never requested"}},
		},
		{
			name: "protocol-violation: the client writes a log line into the transport",
			build: func(b *tb) {
				s := b.recv("c2s", "DEBUG connecting to the server")
				b.fwd("c2s", s)
				b.call("1", "initialize")
				b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s"}}}`)
				b.clientDone(0)
				b.cexit(0)
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Seqs: seqs(4),
				Message: "non-JSON in its output to the server: a line that is not a JSON object, typically logging into the transport (1 frame from the client)"}},
		},
		{
			name: "the client's exit is its own, not the server's",
			build: func(b *tb) {
				b.clientDone(0)
				b.cexit(0)
				b.killed("SIGSEGV", false) // a server's exit event, which the client judge ignores
			},
		},
	})
	runClientCases(t, expectFailure, []judgeCase{
		{
			name: "failure: a traceback of the transport's internals is not a clean failure",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).serverDies(1)
				b.cstderr(pyClosedResource...)
				b.cexit(1)
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ClosedResourceError", Seqs: seqs(10, 14),
				Message: "Python exception anyio.ClosedResourceError on stderr; the client exited with status 1"}},
		},
		{
			name: "failure: a signal mcpchaos did not send is a crash",
			build: func(b *tb) {
				b.at(100).serverDies(1)
				b.ckilled("SIGSEGV", false)
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "signal:SIGSEGV", Seqs: seqs(8),
				Message: "the client was killed by SIGSEGV, a signal mcpchaos did not send, with no crash signature on stderr"}},
		},
	})
}

// TestJudgeClientEventsBeforeSession: the runner merges its events by time,
// and the client program starts (and may print) before the relay it spawns
// writes its session event.
func TestJudgeClientEventsBeforeSession(t *testing.T) {
	b := newClientTB(expectSuccess)()
	session := b.evs[0]
	b.evs = b.evs[1:2] // the client's start
	b.t = -2000
	b.cstderr(pyClosedResource...)
	b.t = 0
	b.evs = append(b.evs, session, wire.Event{Type: wire.EventProcessStarted, PID: 42})
	for i := range b.evs {
		b.evs[i].Seq = int64(i + 1)
	}
	b.clientDone(0)
	b.cexit(0)
	v := Session(b.evs)
	want := []short{{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "python:ClosedResourceError", Seqs: seqs(2, 14),
		Message: "Python exception anyio.ClosedResourceError on stderr; the client exited with status 0 on its own: its SDK caught the exception, but a task of its transport failed"}}
	if diff := cmp.Diff(want, shorten(v.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	checkNotes(t, nil, v.Indeterminate)
}

// TestJudgeClientEvidence checks what the hang's evidence says of the
// client's events: they name the client, not the server.
func TestJudgeClientEvidence(t *testing.T) {
	b := newClientTB(expectSuccess)()
	b.call("1", "tools/call")
	b.at(10000).csignal("SIGTERM")
	b.ckilled("SIGTERM", true)
	fs := Findings(b.evs)
	if len(fs) != 1 {
		t.Fatalf("findings %v, want one hang", shorten(fs))
	}
	var got []string
	for _, e := range fs[0].Evidence {
		got = append(got, e.Excerpt)
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		"sent SIGTERM to the client: the client had not exited by its 10s deadline",
		"the client was killed by SIGTERM (signalled by mcpchaos)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("excerpts (-want +got):\n%s", diff)
	}
}

// TestJudgeClientSummaryGolden is the summary of a test-client run whose
// list_changed scenario finds the agent-framework deadlock.
func TestJudgeClientSummaryGolden(t *testing.T) {
	b := newClientTB(expectSuccess)()
	b.evs[0].Scenario = "list-changed"
	b.evs[0].Repro = "mcpchaos test-client --scenario list-changed --seed 7 -- python agent.py"
	b.call("0", "initialize")
	b.at(80).replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"mcpchaos"}}}`)
	b.at(90).call("1", "tools/call")
	b.at(120).notify("notifications/tools/list_changed", 1)
	b.at(121).call("2", "tools/list")
	b.at(125).replyRaw(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`)
	b.at(130).reply("1")
	b.at(5130).cprobe(1)
	b.at(7130).cprobe(2)
	b.at(10000).csignal("SIGTERM")
	b.ckilled("SIGTERM", true)
	b.clientDone(0)
	v := Session(b.evs)
	r := &reports.Report{Schema: reports.Schema, Tool: reports.Tool{Name: "mcpchaos", Version: "0.3.0"}, Target: reports.Target{Command: []string{"python", "agent.py"}}, Seed: 7,
		Outcome: reports.OutcomeFail, Findings: v.Findings,
		Scenarios: []reports.ScenarioResult{{Name: "list-changed", Seed: 7, Outcome: reports.OutcomeFail, DurationMS: 10000, Findings: len(v.Findings), Indeterminate: v.Indeterminate}}}
	var buf bytes.Buffer
	reports.WriteSummary(&buf, r)
	goldenfile.Check(t, "client_summary.golden", buf.Bytes())
}

// A script that does not catch its SDK's error for a failed call prints
// the traceback and exits 1: that is how it reports the failure, which
// server-eof expects. FastMCP 4.2.3's Client (mcp 2.3.0) and the
// TypeScript SDK 1.32.2's Client both did so under server-eof, and were
// judged crashed.
func TestJudgeClientUncaughtSDKCallError(t *testing.T) {
	py := readLines(t, "python_client_mcperror.txt")
	node := readLines(t, "node_client_mcperror.txt")
	runClientCases(t, expectFailure, []judgeCase{
		{
			name: "failure: Python's uncaught MCPError: Connection closed is the expected failure",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).serverDies(0)
				b.at(300).cstderr(py...)
				b.cexit(1)
			},
			notes: []string{"the client ended on its SDK's error for a failed call, mcp.shared.exceptions.MCPError: Connection closed, uncaught, and exited with status 1: the failure the scenario expects, not a crash"},
		},
		{
			name: "failure: Node's uncaught McpError: Connection closed is the expected failure",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).serverDies(0)
				b.at(300).cstderr(node...)
				b.cexit(1)
			},
			notes: []string{"the client ended on its SDK's error for a failed call, McpError: MCP error -32000: Connection closed, uncaught, and exited with status 1: the failure the scenario expects, not a crash"},
		},
		{
			name: "failure: a transport crash beside the call's error is still a crash",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).serverDies(0)
				b.at(300).cstderr(pyClosedResource...)
				b.cstderr(py...)
				b.cexit(1)
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ClosedResourceError", Seqs: seqs(10, 50),
				Message: "Python exception anyio.ClosedResourceError on stderr; the client exited with status 1"}},
			notes: []string{"mcp.shared.exceptions.MCPError: Connection closed, uncaught, and exited with status 1: the failure the scenario expects"},
		},
	})
	runClientCases(t, expectSuccess, []judgeCase{
		{
			name: "success: the uncaught error after the server died on its own is the server's failure",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).serverDies(1)
				b.at(300).cstderr(py...)
				b.cexit(1)
			},
			notes: []string{
				"the client ended on its SDK's error for a failed call, mcp.shared.exceptions.MCPError: Connection closed, uncaught, and exited with status 1: a fair failure, as the server had gone (server-stdout closed: end of file), not a crash",
				"the client exited with status 1 after the server had gone (server-stdout closed: end of file): the server's failure, not judged",
			},
		},
		{
			name: "success: the uncaught error while the server serves on is the client failing",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(100).replyRaw(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Connection closed"}}`)
				b.at(300).cstderr(py...)
				b.cexit(1)
				b.end("the client exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:MCPError", Seqs: seqs(8, 44),
				Message: "Python exception mcp.shared.exceptions.MCPError: Connection closed on stderr; the client exited with status 1"}},
		},
	})
}

func TestCallFailure(t *testing.T) {
	py := func(line string) crashHit {
		class, msg, _ := strings.Cut(line, ":")
		return crashHit{sig: pySignature(class, strings.TrimSpace(msg)), text: line}
	}
	for _, tc := range []struct {
		hit  crashHit
		want bool
	}{
		{py("mcp.shared.exceptions.MCPError: Connection closed"), true},
		{py("mcp.shared.exceptions.McpError: Connection closed"), true},
		{py("httpx2.RemoteProtocolError: Server disconnected without sending a response."), true},
		{py("httpx2.ReadError"), true},
		{py("httpx.HTTPStatusError: Server error '503 Service Unavailable' for url 'http://127.0.0.1/mcp'"), true},
		{py("ConnectionResetError: [Errno 104] Connection reset by peer"), true},
		{py("aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected"), true},
		{crashHit{sig: "node:McpError", text: "McpError: MCP error -32000: Connection closed"}, true},
		{crashHit{sig: "node:StreamableHTTPError", text: "StreamableHTTPError: Streamable HTTP error: Error POSTing to endpoint (HTTP 503)"}, true},
		// The SDK's internals failing, and errors that are not about a call.
		{py("anyio.ClosedResourceError"), false},
		{py("anyio.BrokenResourceError"), false},
		{py("RuntimeError: dictionary changed size during iteration"), false},
		{py("fastmcp.exceptions.ToolError: required argument \"text\" not found"), false},
		{py("myapp.MCPError: mine"), false},
		{py("httpx.InvalidURL: no scheme"), false},
		{crashHit{sig: "node:TypeError", text: "TypeError: fetch failed"}, true},
		{crashHit{sig: "node:TypeError", text: "TypeError: Cannot read properties of undefined (reading 'trim')"}, false},
		{crashHit{sig: "go:panic", text: "send on closed channel"}, false},
		// Releases of the TypeScript SDK before 1.17 fail a call with a
		// plain Error made in their transport: where Node says it was made
		// tells it from the program's own errors.
		{crashHit{sig: "node:Error", text: "Error: Error POSTing to endpoint (HTTP 404): Session not found",
			site: "file:///app/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js:284"}, true},
		{crashHit{sig: "node:Error", text: "Error: Not connected",
			site: "/app/node_modules/.pnpm/@modelcontextprotocol+sdk@1.10.0/node_modules/@modelcontextprotocol/sdk/dist/cjs/shared/protocol.js:343"}, true},
		{crashHit{sig: "node:Error", text: "Error: Error POSTing to endpoint (HTTP 503)", site: "/app/dist/bundle.js:9120"}, true},
		{crashHit{sig: "node:Error", text: "Error: no config file", site: "file:///app/client.mjs:12"}, false},
		// The SDK's insides failing, or a server's code under the SDK.
		{crashHit{sig: "node:TypeError", text: "TypeError: Cannot read properties of undefined (reading 'id')",
			site: "file:///app/node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js:301"}, false},
		{crashHit{sig: "node:Error", text: "Error: boom",
			site: "file:///app/node_modules/@modelcontextprotocol/sdk/dist/esm/server/index.js:40"}, false},
		{crashHit{sig: "node:unhandled-error EPIPE", text: "Error: write EPIPE"}, false},
	} {
		if got := callFailure(tc.hit); got != tc.want {
			t.Errorf("callFailure(%q) = %v, want %v", tc.hit.text, got, tc.want)
		}
	}
	// Where Node says the error was made is read off its report.
	for _, h := range scanLines(readLines(t, "node_sdk116_post_error.txt")) {
		if !callFailure(h) {
			t.Errorf("callFailure(%q made at %q) = false, want true", h.text, h.site)
		}
	}
	for _, h := range scanLines(readLines(t, "node_uncaught_typeerror.txt")) {
		if callFailure(h) {
			t.Errorf("callFailure(%q made at %q) = true, want false", h.text, h.site)
		}
	}
}
