package judge

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// TestJudgeCrashSamples runs every stderr sample through the whole judge, as
// the stderr of a server whose stdin an eof fault closed (bug class 3 of
// DESIGN.md), and checks the crash finding it names.
func TestJudgeCrashSamples(t *testing.T) {
	tests := []struct {
		file string
		exit int
		want []string // signature, then message, per finding
		// lead is how many lines of the sample come before the crash
		// (logging), which the excerpt does not start with.
		lead int64
	}{
		{"python_closed_resource_group.txt", 1, []string{"python:ClosedResourceError",
			"Python exception anyio.ClosedResourceError on stderr; the server exited with status 1"}, 0},
		{"python_dict_changed_group.txt", 1, []string{"python:RuntimeError:dictionary changed size during iteration",
			"Python exception RuntimeError: dictionary changed size during iteration on stderr; the server exited with status 1"}, 2},
		{"python_dict_changed_shutdown.txt", 0, []string{"python:RuntimeError:dictionary changed size during iteration",
			"Python exception RuntimeError: dictionary changed size during iteration on stderr; the server exited with status 0"}, 2},
		{"python_broken_resource_group.txt", 1, []string{"python:BrokenResourceError",
			"Python exception anyio.BrokenResourceError on stderr; the server exited with status 1"}, 0},
		// Without a half-close of ours, a broken pipe is the server's: the
		// client side was still reading.
		{"python_broken_pipe_group.txt", 120, []string{"python:BrokenPipeError",
			"Python exception BrokenPipeError: [Errno 32] Broken pipe on stderr (2 times); the server exited with status 120"}, 0},
		{"python_two_leaves_group.txt", 1, []string{
			"python:ClosedResourceError", "Python exception anyio.ClosedResourceError on stderr; the server exited with status 1",
			"python:RuntimeError:dictionary changed size during iteration", "Python exception RuntimeError: dictionary changed size during iteration on stderr; the server exited with status 1",
		}, 0},
		{"go_panic_closed_channel.txt", 2, []string{"go:panic", "Go panic: send on closed channel on stderr; the server exited with status 2"}, 0},
		{"go_concurrent_map_writes.txt", 2, []string{"go:fatal error: concurrent map writes",
			"Go fatal error: concurrent map writes on stderr; the server exited with status 2"}, 0},
		{"go_deadlock.txt", 2, []string{"go:all goroutines are asleep",
			"Go fatal error: all goroutines are asleep - deadlock! on stderr; the server exited with status 2"}, 0},
		{"node_unhandled_error_epipe.txt", 1, []string{"node:unhandled-error EPIPE",
			"Node.js unhandled 'error' event: Error: write EPIPE on stderr; the server exited with status 1"}, 0},
		{"node_unhandled_rejection.txt", 1, []string{"node:unhandled-rejection",
			"Node.js unhandled promise rejection: Error: connect ECONNREFUSED 127.0.0.1:5432 on stderr; the server exited with status 1"}, 0},
		{"node_uncaught_typeerror.txt", 1, []string{"node:TypeError",
			"Node.js uncaught exception: TypeError: Cannot read properties of undefined (reading 'trim') on stderr; the server exited with status 1"}, 0},
		// A Go server that logs the failed write and exits 1 once its
		// stdin closed: no signature, so the status is the finding, a
		// warning (the stdio shutdown asks only that it exit).
		{"go_broken_pipe_log.txt", 1, []string{"exit:1", "the server exited with status 1 once its stdin had closed (early EOF from fault eof#1), with no crash signature on stderr"}, 0},
		{"no_signature_noise.txt", 0, nil, 0},
		// python-sdk's simple-tool (mcp 2.3.0) under eof-inflight: the
		// fetch tool raised after stdin closed, the SDK logged "modern
		// request handler raised" with the traceback, and the server
		// exited 0. Caught by the SDK's word, and a clean exit: no crash.
		{"python_handler_caught.txt", 0, nil, 0},
		// The same, but the server then failed: the exit decides.
		{"python_handler_caught.txt", 1, []string{"python:UnsupportedProtocol",
			"Python exception httpx2.UnsupportedProtocol: Request URL is missing an 'http://' or 'https://' protocol. on stderr; the server exited with status 1"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b := newTB()
			b.eofFault()
			first := int64(len(b.evs) + 1)
			b.stderr(readLines(t, tc.file)...)
			exit := b.exit(tc.exit)
			b.end("the server exited")
			v := Session(b.evs)
			var want []short
			for i := 0; i < len(tc.want); i += 2 {
				s := short{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: tc.want[i], Message: tc.want[i+1], Seqs: seqs(first+tc.lead, exit)}
				if strings.HasPrefix(s.Signature, "exit:") {
					s.Severity, s.Seqs = reports.SeverityWarning, seqs(first-1, exit)
				}
				want = append(want, s)
			}
			if diff := cmp.Diff(want, shorten(v.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, f := range v.Findings {
				if f.Kind == reports.KindCrash && f.Signature[:5] != "exit:" {
					if x := f.Evidence[0].Excerpt; f.Evidence[0].Type != "stderr" || strings.Count(x, "\n") >= maxStderrLines {
						t.Errorf("crash excerpt: type %q, %d lines, want stderr of at most %d lines", f.Evidence[0].Type, strings.Count(x, "\n")+1, maxStderrLines)
					}
				}
			}
		})
	}
}

var pyBrokenPipe = []string{
	"Traceback (most recent call last):",
	`  File "/srv/s.py", line 9, in send`,
	"    sys.stdout.flush()",
	"BrokenPipeError: [Errno 32] Broken pipe",
}

var pyPlainValueError = []string{
	"Traceback (most recent call last):",
	`  File "/srv/calc/server.py", line 19, in handle`,
	`    return {"value": int(args["x"])}`,
	"ValueError: invalid literal for int() with base 10: 'seven'",
}

var pyClosedResource = []string{
	"Traceback (most recent call last):",
	`  File "/srv/.venv/lib/python3.12/site-packages/anyio/streams/memory.py", line 211, in send_nowait`,
	"    raise ClosedResourceError",
	"anyio.ClosedResourceError",
}

func TestJudgeCrash(t *testing.T) {
	runJudgeCases(t, []judgeCase{
		{
			name:  "a clean exit is no crash",
			build: func(b *tb) { b.finish() },
		},
		{
			name: "a traceback is a crash even when the server exits 0",
			build: func(b *tb) {
				b.clientClosed()
				b.stderr(pyClosedResource...)
				b.exit(0)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ClosedResourceError", Seqs: seqs(4, 8),
				Message: "Python exception anyio.ClosedResourceError on stderr; the server exited with status 0"}},
		},
		{
			name: "a traceback printed while the server keeps running is a crash",
			build: func(b *tb) {
				b.stderr(pyClosedResource...)
				b.stderr(pyClosedResource...)
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ClosedResourceError", Seqs: seqs(3),
				Message: "Python exception anyio.ClosedResourceError on stderr (2 times); it had not exited when the transcript ends"}},
			unknown: []string{"no session-end event"},
		},
		{
			// python-sdk's example simple-tool (mcp 2.3.0): a tool raises on
			// a bad URL, the SDK logs "request handler raised" with the
			// traceback, answers the call with an error and goes on.
			name: "a traceback the server logged before answering on is a handled exception, not a crash",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).stderr(append([]string{"modern request handler raised"}, pyPlainValueError...)...)
				b.at(11).replyRaw(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"invalid literal"}}`)
				b.at(20).finish()
			},
			notes: []string{"the server logged Python exception ValueError: invalid literal for int() with base 10: 'seven' and went on serving: a handled exception, not a crash"},
		},
		{
			// The CI flake of TestCorpusVerdicts/python-sdk_simple-tool:
			// the handler raised only after the eof fault closed stdin, so
			// no answer came after it, but the SDK said it caught it.
			name: "a traceback the SDK said it caught, raised after the server was told to stop, then exit 0: handled",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(5).eofFault()
				b.at(10).stderr(append([]string{"ERROR:mcp.shared.jsonrpc_dispatcher:handler for 'tools/call' raised"}, pyPlainValueError...)...)
				b.at(12).stdoutEOF()
				b.exit(0)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityWarning, Request: &reports.Request{ID: "1", Method: "tools/call"}, Seqs: seqs(3, 4, 6, 12),
				Message: "tools/call (id 1) left unanswered: the server closed its stdout and exited with status 0 after its stdin closed (early EOF from fault eof#1), so it was shutting down"}},
			notes: []string{`each time after its SDK's word that it caught it ("ERROR:mcp.shared.jsonrpc_dispatcher:handler for 'tools/call' raised"): a handled exception, not a crash`},
		},
		{
			name: "a traceback after a log line that is not the SDK catching a handler's exception is a crash",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(5).eofFault()
				b.at(10).stderr(append([]string{"Error in message router"}, pyClosedResource...)...)
				b.at(12).stdoutEOF()
				b.exit(0)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindLostResponse, Severity: reports.SeverityWarning, Request: &reports.Request{ID: "1", Method: "tools/call"}, Seqs: seqs(3, 4, 6, 12),
				Message: "tools/call (id 1) left unanswered: the server closed its stdout and exited with status 0 after its stdin closed (early EOF from fault eof#1), so it was shutting down"}, {Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ClosedResourceError", Seqs: seqs(8, 13),
				Message: "Python exception anyio.ClosedResourceError on stderr; the server exited with status 0"}},
		},
		{
			// The answer was written after the traceback, but stdout and
			// stderr are read apart: it was recorded first. The server was
			// still serving when the client closed its stdin, and exited 0.
			name: "a traceback recorded after the last answer, the server serving on until told to stop: handled",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(5).reply("1")
				b.at(5).stderr(pyPlainValueError...)
				b.at(20).finish()
			},
			notes: []string{"and went on serving: a handled exception, not a crash"},
		},
		{
			name: "a traceback after which the server ends its output by itself is a crash, even with status 0",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(5).reply("1")
				b.at(10).stderr(pyPlainValueError...)
				b.at(11).stdoutEOF()
				b.exit(0)
				b.at(20).clientClosed()
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ValueError:invalid literal for int() with base 10: 'seven'", Seqs: seqs(7, 12),
				Message: "Python exception ValueError: invalid literal for int() with base 10: 'seven' on stderr; the server exited with status 0"}},
		},
		{
			name: "a logged traceback before answers is a crash when the server then dies",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).stderr(pyPlainValueError...)
				b.at(11).reply("1")
				b.at(20).stdoutEOF()
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ValueError:invalid literal for int() with base 10: 'seven'", Seqs: seqs(5, 12),
				Message: "Python exception ValueError: invalid literal for int() with base 10: 'seven' on stderr; the server exited with status 1"}},
		},
		{
			// The relay closes the stdin of a server whose output ended:
			// that asks nothing of it, and its status is a failure.
			name: "a non-zero exit after its own end of output is a crash, although its stdin closed before the exit",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.at(10).stdoutEOF()
				b.pipe(wire.PipeServerInput, "the server's output ended", true)
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{
				{Kind: reports.KindLostResponse, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(3, 4, 5),
					Message: "tools/call (id 1) left unanswered: the server closed its stdout and exited with status 1"},
				{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "exit:1", Seqs: seqs(7),
					Message: "the server exited with status 1, with no crash signature on stderr"},
			},
		},
		{
			name: "killed by a signal mcpchaos did not send",
			build: func(b *tb) {
				b.killed("SIGSEGV", false)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "signal:SIGSEGV", Seqs: seqs(3),
				Message: "the server was killed by SIGSEGV, a signal mcpchaos did not send, with no crash signature on stderr"}},
		},
		{
			name: "the group clean-up SIGKILL after the server exited explains nothing",
			build: func(b *tb) {
				b.stdoutEOF()
				b.signal("SIGKILL", wire.GroupCleanupDetail)
				b.exit(3)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "exit:3", Seqs: seqs(5),
				Message: "the server exited with status 3, with no crash signature on stderr"}},
		},
		{
			name: "a status after our SIGTERM reports our signal",
			build: func(b *tb) {
				b.clientClosed()
				b.at(3000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.exit(143)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityWarning, Seqs: seqs(3, 4, 5),
				Message: "the server did not exit within 3s of its stdin closing (the client closed its output); SIGTERM ended it 3s after its stdin closed"}},
		},
		{
			// npx runs the server as its child: SIGTERM ends npx, and the
			// group's clean-up SIGKILL, recorded before the exit, ends the
			// server it left behind. SIGTERM is what ended the server.
			name: "the group clean-up after the ladder's SIGTERM is not the ladder's SIGKILL",
			build: func(b *tb) {
				b.clientClosed()
				b.at(3000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.stdoutEOF()
				b.signal("SIGKILL", wire.GroupCleanupDetail)
				b.killed("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityWarning, Seqs: seqs(3, 4, 7),
				Message: "the server did not exit within 3s of its stdin closing (the client closed its output); SIGTERM ended it 3s after its stdin closed"}},
		},
		{
			name: "a signal fault's signal is ours",
			build: func(b *tb) {
				b.add(wire.Event{Type: wire.EventFault, Fault: "kill#1", Action: "signal", Detail: "send SIGKILL"})
				b.signal("SIGKILL", "fault kill#1")
				b.killed("SIGKILL", false)
				b.end("the server exited")
			},
		},
		{
			name: "a traceback printed after our SIGTERM is not judged",
			build: func(b *tb) {
				b.clientClosed()
				b.at(3000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.stderr(pyClosedResource...)
				b.killed("SIGTERM", true)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityWarning, Seqs: seqs(3, 4, 9),
				Message: "the server did not exit within 3s of its stdin closing (the client closed its output); SIGTERM ended it 3s after its stdin closed"}},
			notes: []string{"the server printed python:ClosedResourceError after mcpchaos signalled it"},
		},
		// Once mcpchaos closed its output, a server's writes fail and it can
		// answer nothing: exiting is fair, but an exception the failed write
		// raised that ended it is still a crash, a warning (issue 23).
		{
			name: "half-close: an uncaught BrokenPipeError that ends the server is a crash, a warning",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(pyBrokenPipe...)
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "python:BrokenPipeError", Seqs: seqs(5, 4, 9),
				Message: "Python exception BrokenPipeError: [Errno 32] Broken pipe on stderr after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1), and the server exited with status 1: the failed write was the fault's doing, but the exception it raised went unhandled and ended the server (catch the write error and shut down cleanly)"}},
		},
		{
			name: "half-close: Node's unhandled 'error' EPIPE is a crash, a warning",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(readLines(t, "node_unhandled_error_epipe.txt")...)
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "node:unhandled-error EPIPE", Seqs: seqs(5, 4, 30),
				Message: "Node.js unhandled 'error' event: Error: write EPIPE on stderr after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1), and the server exited with status 1: the failed write was the fault's doing, but the exception it raised went unhandled and ended the server (catch the write error and shut down cleanly)"}},
		},
		{
			name: "half-close: a Go panic on the broken pipe is a crash, a warning",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(readLines(t, "go_panic_broken_pipe.txt")...)
				b.exit(2)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "go:panic", Seqs: seqs(5, 4, 10),
				Message: "Go panic: write /dev/stdout: broken pipe on stderr after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1), and the server exited with status 2: the failed write was the fault's doing, but the exception it raised went unhandled and ended the server (catch the write error and shut down cleanly)"}},
		},
		{
			// The Python SDK's writer stream, closed by the broken pipe,
			// raising in a handler that nothing caught.
			name: "half-close: another exception that ends the server is a crash, a warning",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(pyClosedResource...)
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "python:ClosedResourceError", Seqs: seqs(5, 4, 9),
				Message: "Python exception anyio.ClosedResourceError on stderr after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1), and the server exited with status 1: the failed write was the fault's doing, but the exception it raised went unhandled and ended the server (catch the write error and shut down cleanly)"}},
		},
		{
			// The fixed twin of examples/servers/broken-pipe: it logs the
			// failed write with its traceback and exits 0 at EOF.
			name: "half-close: a broken pipe logged, then a clean exit, is handled",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(append([]string{"ERROR:server:writing the answer failed"}, pyBrokenPipe...)...)
				b.exit(0)
				b.end("the server exited")
			},
			notes: []string{"the server printed python:BrokenPipeError after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1): the failed write is the fault's doing"},
		},
		{
			// python-sdk's simple-tool (mcp 2.3.0): its tool raised and the
			// SDK said it caught it; then the writer's BrokenPipeError ended
			// the server. Only the last is what ended it.
			name: "half-close: only the exception printed last before the failing exit ended the server",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(append([]string{"modern request handler raised"}, pyPlainValueError...)...)
				b.stderr(pyClosedResource...)
				b.stderr(pyBrokenPipe...)
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "python:BrokenPipeError", Seqs: seqs(14, 4, 18),
				Message: "Python exception BrokenPipeError: [Errno 32] Broken pipe on stderr after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1), and the server exited with status 1: the failed write was the fault's doing, but the exception it raised went unhandled and ended the server (catch the write error and shut down cleanly)"}},
			notes: []string{
				"the server printed python:ValueError:invalid literal for int() with base 10: 'seven' after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1): whether it handled it and went on cannot be seen",
				"the server printed python:ClosedResourceError after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1): whether it handled it and went on cannot be seen",
			},
		},
		{
			// python-sdk's simple-tool (mcp 2.3.0) under
			// half-close:on=s2c:error:tools/call,tool=fetch: its fetch tool
			// raised on a URL that is none, twice, and the SDK caught it and
			// answered with an error; mcpchaos closed its output after that
			// answer, and the writer's BrokenPipeError, its group printed on
			// the line after the last handled traceback, ended the server.
			// The handled traceback before the half-close did not end it.
			name: "half-close: a handled exception before it, then a BrokenPipeError that ends the server: the broken pipe is the crash, a warning",
			build: func(b *tb) {
				b.call("4", "tools/call")
				b.call("5", "tools/call")
				b.stderr(readLines(t, "python_handler_caught.txt")...)
				b.stderr(readLines(t, "python_handler_caught.txt")...)
				b.replyRaw(`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal server error"}}`)
				b.halfClose()
				b.clientClosed()
				b.stderr(readLines(t, "python_stdout_writer_broken_pipe.txt")...)
				b.exit(1)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "python:BrokenPipeError", Seqs: seqs(132, 130, 197),
				Message: "Python exception BrokenPipeError: [Errno 32] Broken pipe on stderr after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1), and the server exited with status 1: the failed write was the fault's doing, but the exception it raised went unhandled and ended the server (catch the write error and shut down cleanly)"}},
			notes: []string{
				"tools/call (id 5) unanswered, but mcpchaos had closed the server's output",
				"the server logged Python exception httpx2.UnsupportedProtocol: Request URL is missing an 'http://' or 'https://' protocol. (2 times) and went on serving: a handled exception, not a crash",
			},
		},
		{
			name: "a handled exception before the half-close, and a failing exit with no traceback after it: the exception is the crash",
			build: func(b *tb) {
				b.call("4", "tools/call")
				b.stderr(readLines(t, "python_handler_caught.txt")...)
				b.replyRaw(`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal server error"}}`)
				b.halfClose()
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:UnsupportedProtocol", Seqs: seqs(6, 69),
				Message: "Python exception httpx2.UnsupportedProtocol: Request URL is missing an 'http://' or 'https://' protocol. on stderr; the server exited with status 1"}},
		},
		{
			name: "an unhandled exception before the half-close, then a broken pipe at exit: the exception is still the crash",
			build: func(b *tb) {
				b.stderr(pyPlainValueError...)
				b.halfClose()
				b.clientClosed() // the relay's doing: not a sign the server went on serving
				b.stderr(pyBrokenPipe...)
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{
				{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ValueError:invalid literal for int() with base 10: 'seven'", Seqs: seqs(3, 14),
					Message: "Python exception ValueError: invalid literal for int() with base 10: 'seven' on stderr; the server exited with status 1"},
				{Kind: reports.KindCrash, Severity: reports.SeverityWarning, Signature: "python:BrokenPipeError", Seqs: seqs(10, 8, 14),
					Message: "Python exception BrokenPipeError: [Errno 32] Broken pipe on stderr after mcpchaos closed its output (server-stdout closed by mcpchaos: half-closed by fault half-close#1), and the server exited with status 1: the failed write was the fault's doing, but the exception it raised went unhandled and ended the server (catch the write error and shut down cleanly)"},
			},
		},
		{
			name: "an unhandled exception and a failing exit with no half-close is a crash",
			build: func(b *tb) {
				b.stderr(readLines(t, "python_handler_caught.txt")[1:]...) // without the SDK's word
				b.exit(1)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:UnsupportedProtocol", Seqs: seqs(3, 62),
				Message: "Python exception httpx2.UnsupportedProtocol: Request URL is missing an 'http://' or 'https://' protocol. on stderr; the server exited with status 1"}},
		},
		{
			name: "half-close: an exception the SDK said it caught, printed last, then a failing exit: the exit is noted",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(append([]string{"modern request handler raised"}, pyPlainValueError...)...)
				b.exit(1)
				b.end("the server exited")
			},
			notes: []string{"the server printed python:ValueError:invalid literal for int() with base 10: 'seven' after mcpchaos closed its output",
				"the server exited with status 1 after mcpchaos closed its output"},
		},
		{
			name: "half-close: death by SIGPIPE is the fault's doing",
			build: func(b *tb) {
				b.halfClose()
				b.killed("SIGPIPE", false)
				b.end("the server exited")
			},
			notes: []string{"the server died of SIGPIPE after mcpchaos closed its output"},
		},
		{
			name: "half-close: a traceback, then death by SIGPIPE: the signal ended it",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(pyClosedResource...)
				b.killed("SIGPIPE", false)
				b.end("the server exited")
			},
			notes: []string{"the server printed python:ClosedResourceError after mcpchaos closed its output", "the server died of SIGPIPE after mcpchaos closed its output"},
		},
		{
			name: "half-close: Go's logged broken pipe and exit 1 are the fault's doing",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(readLines(t, "go_broken_pipe_log.txt")...)
				b.exit(1)
				b.end("the server exited")
			},
			notes: []string{"the server exited with status 1 after mcpchaos closed its output"},
		},
		{
			name: "half-close: a traceback, then the ladder's SIGTERM: the server did not die of it",
			build: func(b *tb) {
				b.halfClose()
				b.stderr(pyBrokenPipe...)
				b.clientClosed()
				b.at(3000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.exit(143)
				b.end("the client closed its output")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityWarning, Seqs: seqs(9, 10, 11),
				Message: "the server did not exit within 3s of its stdin closing (the client closed its output); SIGTERM ended it 3s after its stdin closed"}},
			notes: []string{"the server printed python:BrokenPipeError after mcpchaos closed its output"},
		},
		{
			name: "a broken pipe printed before the half-close is the server's",
			build: func(b *tb) {
				b.stderr(pyBrokenPipe...)
				b.halfClose() // at the same microsecond: order is by seq
				b.exit(0)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:BrokenPipeError", Seqs: seqs(3, 9),
				Message: "Python exception BrokenPipeError: [Errno 32] Broken pipe on stderr; the server exited with status 0"}},
		},
		{
			name: "stderr lines that are not UTF-8 are read, not skipped",
			build: func(b *tb) {
				e := wire.Event{Type: wire.EventStderr}
				e.SetRaw([]byte("panic: bad byte \xff in input\n"))
				b.add(e)
				b.exit(2)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "go:panic", Seqs: seqs(3, 4),
				Message: "Go panic: bad byte \uFFFD in input on stderr; the server exited with status 2"}},
		},
	})
}

func TestJudgeZombie(t *testing.T) {
	runJudgeCases(t, []judgeCase{
		{
			name: "exits within the grace period",
			build: func(b *tb) {
				b.clientClosed()
				b.at(2900).exit(0)
				b.end("the client closed its output")
			},
		},
		{
			name: "ignores SIGTERM: SIGKILL was needed",
			build: func(b *tb) {
				b.eofFault()
				b.at(3000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.at(6000).signal("SIGKILL", "the server did not exit within 3s of SIGTERM")
				b.killed("SIGKILL", true)
				b.end("the server exited")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityError, Seqs: seqs(4, 5, 6, 7),
				Message: "the server did not exit within 3s of its stdin closing (early EOF from fault eof#1); SIGTERM did not end it; SIGKILL did, 6s after its stdin closed"}},
		},
		{
			name: "never exits and the transcript ends",
			build: func(b *tb) {
				b.clientClosed()
				b.at(5000).stderr("still here")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityError, Seqs: seqs(3),
				Message: "the server did not exit within 3s of its stdin closing (the client closed its output); it had not exited when the transcript ends, 5s after its stdin closed"}},
			unknown: []string{"no session-end event"},
		},
		{
			name: "SIGTERM sent, and the transcript ends",
			build: func(b *tb) {
				b.clientClosed()
				b.at(3000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.at(4000).stderr("still here")
			},
			want: []short{{Kind: reports.KindZombie, Severity: reports.SeverityError, Seqs: seqs(3, 4),
				Message: "the server did not exit within 3s of its stdin closing (the client closed its output); it had not exited when the transcript ends, 4s after its stdin closed and SIGTERM"}},
			unknown: []string{"no session-end event"},
		},
		{
			name: "the transcript ends within the grace period",
			build: func(b *tb) {
				b.clientClosed()
				b.at(1000).stderr("bye")
			},
			unknown: []string{"no session-end event", "the transcript ends 1s after the server's stdin closed, within the 3s grace period"},
		},
		{
			name: "blocked by a stall that never lifts: indeterminate",
			build: func(b *tb) {
				b.stall(-1)
				b.clientClosed()
				b.at(3000).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
				b.killed("SIGTERM", true)
				b.end("the client closed its output")
			},
			notes: []string{"a stall fault had stopped mcpchaos reading its output: it may have been blocked writing"},
		},
	})
}

func TestJudgeProtocol(t *testing.T) {
	runJudgeCases(t, []judgeCase{
		{
			name: "logging to stdout: one finding with a count",
			build: func(b *tb) {
				b.replyRaw("INFO starting weather server")
				b.replyRaw("INFO listening on stdio")
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Seqs: seqs(3, 5),
				Message: "non-JSON on stdout: a line that is not a JSON object, typically logging to stdout (2 frames from the server)"}},
		},
		{
			name: "broken JSON, whatever the byte, is one problem",
			build: func(b *tb) {
				b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{}`)
				b.replyRaw(`{"jsonrpc":"2.0" "id":2}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Seqs: seqs(3, 5),
				Message: "a line that is not valid JSON (not JSON: unexpected end of frame) (2 frames from the server)"}},
		},
		{
			name: "bytes that are not UTF-8",
			build: func(b *tb) {
				b.call("1", "ping")
				b.replyRaw("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\"\xff\"}}")
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Seqs: seqs(5),
				Message: "a frame that is not valid UTF-8 (1 frame from the server)"}},
		},
		{
			name: "a raw control character inside a string",
			build: func(b *tb) {
				b.call("1", "ping")
				b.replyRaw("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":\"a\tb\"}}")
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Seqs: seqs(5),
				Message: "a frame that is not valid JSON inside a string (a raw control character or a bad escape) (1 frame from the server)"}},
		},
		{
			name: "a good initialize result",
			build: func(b *tb) {
				b.call("0", "initialize")
				b.replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"1.0"}}}`)
				b.finish()
			},
		},
		{
			name: "initialize result without capabilities",
			build: func(b *tb) {
				b.call("0", "initialize")
				b.replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"weather"}}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req("0", "initialize"), Seqs: seqs(5),
				Message: "1 result of initialize breaks the MCP 2025-06-18 schema: /result/serverInfo: missing property 'version'; /result: missing property 'capabilities'"}},
		},
		{
			name: "initialize result with a numeric protocolVersion and a nameless serverInfo",
			build: func(b *tb) {
				b.call("0", "initialize")
				b.replyRaw(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":20250618,"capabilities":{},"serverInfo":{}}}`)
				b.call("1", "initialize")
				b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"version":"1"}}}`)
				b.finish()
			},
			want: []short{
				// The first names no version: judged by the last stateful
				// revision's schema.
				{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req("0", "initialize"), Seqs: seqs(5),
					Message: "1 result of initialize breaks the MCP 2025-11-25 schema: /result/protocolVersion: got number, want string; /result/serverInfo: missing properties 'name', 'version'"},
				{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req("1", "initialize"), Seqs: seqs(9),
					Message: "1 result of initialize breaks the MCP 2025-06-18 schema: /result/serverInfo: missing property 'name'"},
			},
		},
		{
			name: "tools/list: a tool without an inputSchema",
			build: func(b *tb) {
				b.call("1", "tools/list")
				b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"add"}]}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req("1", "tools/list"), Seqs: seqs(5),
				Message: "1 result of tools/list breaks the MCP 2025-11-25 schema: /result/tools/1: missing property 'inputSchema'"}},
		},
		{
			// The schema requires content beside structuredContent
			// (CallToolResult.content has no "?").
			name: "tools/call: structuredContent alone breaks the schema",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"t":21}}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(5),
				Message: "1 result of tools/call breaks the MCP 2025-11-25 schema: /result: missing property 'content'; /result: missing property 'task'"}},
		},
		{
			name: "tools/call: neither content nor structuredContent",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.replyRaw(`{"jsonrpc":"2.0","id":1,"result":{"text":"21C"}}`)
				b.finish()
			},
			want: []short{{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(5),
				Message: "1 result of tools/call breaks the MCP 2025-11-25 schema: /result: missing property 'content'; /result: missing property 'task'"}},
		},
		{
			name: "an error answer is not schema-checked",
			build: func(b *tb) {
				b.call("1", "tools/call")
				b.replyRaw(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`)
				b.finish()
			},
		},
		{
			name: "progress notifications need a token and a number",
			build: func(b *tb) {
				b.replyRaw(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5}}`)
				b.replyRaw(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`)
				b.replyRaw(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":"half"}}`)
				b.finish()
			},
			want: []short{
				{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Seqs: seqs(5),
					Message: "1 notification of notifications/progress breaks the MCP 2025-11-25 schema: /params: missing property 'progressToken'"},
				{Kind: reports.KindProtocolViolation, Severity: reports.SeverityError, Seqs: seqs(7),
					Message: "1 notification of notifications/progress breaks the MCP 2025-11-25 schema: /params/progress: got string, want number"},
			},
		},
		{
			name: "frames mcpchaos injected are not the server's",
			build: func(b *tb) {
				m := wire.Classify([]byte("garbage\n"))
				e := wire.Event{Type: wire.EventInjected, Fault: "corrupt#1"}
				e.SetMessage(wire.ToClient, &m)
				b.add(e)
				b.finish()
			},
		},
		{
			name: "the client's frames are not the server's",
			build: func(b *tb) {
				s := b.recv("c2s", "garbage")
				b.fwd("c2s", s)
				b.finish()
			},
		},
	})
}

func TestJudgeSession(t *testing.T) {
	t.Run("role client judges the client: the server's failures are not findings", func(t *testing.T) {
		b := newTB()
		b.evs[0].Role = "client"
		b.client = true
		b.call("1", "tools/call")
		b.at(10000).exit(1)
		b.end("the server exited")
		v := Session(b.evs)
		if len(v.Findings) != 0 {
			t.Errorf("findings: %v, want none", shorten(v.Findings))
		}
		checkNotes(t, []string{"the transcript records nothing about the client program"}, v.Indeterminate)
	})
	t.Run("a role client session event after the traffic judges nothing", func(t *testing.T) {
		b := newTB()
		session := b.evs[0]
		session.Role = "client"
		b.evs = b.evs[1:]
		b.call("1", "tools/call")
		b.add(session)
		b.at(10000).finish()
		v := Session(b.evs)
		if len(v.Findings) != 0 {
			t.Errorf("findings: %v, want none", shorten(v.Findings))
		}
		checkNotes(t, []string{"does not start with a session event"}, v.Notes)
		checkNotes(t, []string{"came after the traffic it describes"}, v.Indeterminate)
	})
	t.Run("without a session event the defaults apply", func(t *testing.T) {
		b := newTB()
		b.evs = b.evs[1:]
		b.call("1", "tools/call")
		b.at(10000).finish()
		v := Session(b.evs)
		want := []short{{Kind: reports.KindHang, Severity: reports.SeverityError, Request: req("1", "tools/call"), Seqs: seqs(2, 3),
			Message: "tools/call (id 1) unanswered after 5s; no liveness ping was sent, so whether its receive loop runs is unknown"}}
		if diff := cmp.Diff(want, shorten(v.Findings)); diff != "" {
			t.Errorf("findings (-want +got):\n%s", diff)
		}
		checkNotes(t, []string{"does not start with a session event"}, v.Notes)
		if f := v.Findings[0]; f.Scenario != "" || f.Seed != 0 || f.Repro != "" {
			t.Errorf("finding names scenario %q seed %d repro %q, want none", f.Scenario, f.Seed, f.Repro)
		}
	})
	t.Run("the deadline comes from the session event", func(t *testing.T) {
		// At 10 s the client gives up and the server exits: past a 5 s
		// deadline that is a hang, within a 20 s one a lost response.
		b := newTB()
		b.evs[0].DeadlineMS = 20000
		b.call("1", "tools/call")
		b.at(10000).finish()
		if v := Session(b.evs); len(v.Findings) != 1 || v.Findings[0].Kind != reports.KindLostResponse {
			t.Errorf("got %v, want one lost-response: the 20 s deadline had not passed", shorten(v.Findings))
		}
	})
	t.Run("findings are sorted by kind, then by first evidence", func(t *testing.T) {
		b := newTB()
		b.replyRaw("log line")     // protocol-violation, 3
		b.reply("77")              // unknown-response, 5
		b.call("1", "tools/call")  // hang, 7
		b.call("2", "tools/list")  // hang, 9
		b.stderr("panic: boom")    // crash, 11
		b.at(10000).stdoutEOF()    //
		b.exit(2)                  //
		b.end("the server exited") //
		got := Findings(b.evs)
		var kinds []string
		for _, f := range got {
			kinds = append(kinds, f.Kind+" "+requestID(f.Request))
		}
		want := []string{"hang 1", "hang 2", "unknown-response 77", "crash -", "protocol-violation -"}
		if diff := cmp.Diff(want, kinds); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	})
	t.Run("Verdict is final: later events are ignored", func(t *testing.T) {
		b := newTB()
		b.finish()
		j := New()
		for _, e := range b.evs {
			j.Add(e)
		}
		first := j.Verdict()
		j.Add(wire.Event{Seq: 99, Type: wire.EventStderr, Raw: "panic: late\n"})
		if diff := cmp.Diff(first, j.Verdict()); diff != "" {
			t.Errorf("verdict changed (-first +second):\n%s", diff)
		}
	})
}

func requestID(r *reports.Request) string {
	if r == nil {
		return "-"
	}
	return r.ID
}

// httpServerTB starts a transcript of test --url -- CMD: an HTTP server the
// run started, which it stops with SIGTERM at the end.
func httpServerTB() *tb {
	b := &tb{}
	seed := testSeed
	b.add(wire.Event{Type: wire.EventSession, Seed: &seed, URL: "http://127.0.0.1:3000/mcp", Command: []string{"python", "server.py"},
		Scenario: testScenario, Role: "server", DeadlineMS: 5000, GraceMS: 3000, Repro: testRepro})
	b.add(wire.Event{Type: wire.EventProcessStarted, PID: 42, Command: []string{"python", "server.py"}})
	return b
}

// sigterm is the end of a test --url run: SIGTERM, and the exit it causes.
func (b *tb) sigterm(ms float64) int64 {
	b.at(ms).add(wire.Event{Type: wire.EventSignal, Signal: "SIGTERM", PID: 42, ByUs: true, Detail: "the server is stopped: the probe client ended its session"})
	seq := b.killed("SIGTERM", true)
	b.end("the probe client ended its session")
	return seq
}

// endSessionInflight is end-session-inflight's start: a call in flight when
// the fault sends the session's DELETE, which the server accepts.
func (b *tb) endSessionInflight() {
	seq := b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	b.at(5).add(wire.Event{Type: wire.EventFault, Fault: "end-session#1", Action: "end-session", Of: seq, Detail: "end the session at the server (DELETE)"})
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "DELETE /mcp (sent by fault end-session#1)", MCPSession: "s1", Fault: "end-session#1"})
	b.at(6).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 200})
}

// A session of a streamable HTTP server that dies of an exception is the
// HTTP face of the stdio crash (issue 23): the Python SDK's session manager
// catches it only to keep its other sessions alive, and logs "Session …
// crashed" with the traceback. Its other logged tracebacks, of one stream's
// writer it closes and goes on, stay handled.
func TestJudgeSessionCrash(t *testing.T) {
	sample := readLines(t, "python_session_crashed.txt")
	// The sample's line that says the session crashed starts the excerpt.
	crashLine := int64(slicesIndex(sample, "ERROR:mcp.server.streamable_http_manager:Session 6cb9b3aa986f4ae2bbc8593e893b8812 crashed"))
	const first = 9 // the sample's first stderr event, after endSessionInflight
	closed := func(seq ...int64) []short {
		return []short{{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "python:ClosedResourceError", Seqs: seq}}
	}
	withMessage := func(s []short, msg string) []short { s[0].Message = msg; return s }
	runCasesFrom(t, httpServerTB, testRepro, []judgeCase{
		{
			// FastMCP 2.12.5 on mcp 1.16.0 under end-session-inflight.
			name: "mcp 1.16: Session … crashed: <exception>, the server serving on",
			build: func(b *tb) {
				b.endSessionInflight()
				b.at(20).stderr(sample...)
				b.sigterm(8000)
			},
			want: withMessage(closed(first+crashLine, first+int64(len(sample))+1),
				`Python exception anyio.ClosedResourceError ended a session: the server's SDK logged "ERROR:mcp.server.streamable_http_manager:Session 6cb9b3aa986f4ae2bbc8593e893b8812 crashed: unhandled errors in a TaskGroup (1 sub-exception)" with the traceback, and the handlers running in that session died with it, unanswered; the server went on serving (its SDK catches the exception only to keep its other sessions alive)`),
			notes: []string{"1 request was in flight"},
		},
		{
			// mcp 1.27 and 2.x log it with logger.exception, without the
			// exception's text.
			name: "mcp 1.27: Session … crashed, alone",
			build: func(b *tb) {
				b.endSessionInflight()
				b.at(20).stderr(append([]string{"ERROR:mcp.server.streamable_http_manager:Session 5f90 crashed"}, pyClosedResource...)...)
				b.sigterm(8000)
			},
			want: withMessage(closed(9, 15),
				`Python exception anyio.ClosedResourceError ended a session: the server's SDK logged "ERROR:mcp.server.streamable_http_manager:Session 5f90 crashed" with the traceback, and the handlers running in that session died with it, unanswered; the server went on serving (its SDK catches the exception only to keep its other sessions alive)`),
			notes: []string{"1 request was in flight"},
		},
		{
			name: "a stateless session that crashed, twice, the server then dying",
			build: func(b *tb) {
				b.endSessionInflight()
				b.at(20).stderr(append([]string{"Stateless session crashed"}, pyClosedResource...)...)
				b.at(30).stderr(append([]string{"Stateless session crashed"}, pyClosedResource...)...)
				b.exit(1)
				b.end("the server exited")
			},
			want: withMessage(closed(9, 19),
				`Python exception anyio.ClosedResourceError ended a session (2 times): the server's SDK logged "Stateless session crashed" with the traceback, and the handlers running in that session died with it, unanswered; the server exited with status 1`),
			notes: []string{"1 request was in flight"},
		},
		{
			// mcp 1.27.0 under end-session-inflight: the standalone
			// stream's writer meets the closed stream, the SDK logs it
			// and closes that stream; the session ends cleanly.
			name: "a stream's writer that the SDK logged and closed is handled",
			build: func(b *tb) {
				b.endSessionInflight()
				b.at(20).stderr(append([]string{"Error in standalone SSE writer"}, pyClosedResource...)...)
				b.at(21).stderr(append([]string{"ERROR:mcp.server.streamable_http:Error in message router"}, pyClosedResource...)...)
				b.sigterm(8000)
			},
			notes: []string{"1 request was in flight", "the server logged Python exception anyio.ClosedResourceError (2 times) and went on serving: a handled exception, not a crash"},
		},
		{
			name: "the session manager cleaning up after a crash names no exception",
			build: func(b *tb) {
				b.endSessionInflight()
				b.at(20).stderr(append([]string{"Cleaning up crashed session 5f90 from active instances."}, pyClosedResource...)...)
				b.sigterm(8000)
			},
			notes: []string{"1 request was in flight", "and went on serving: a handled exception, not a crash"},
		},
	})
}

func slicesIndex(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	panic("no line starts with " + prefix)
}
