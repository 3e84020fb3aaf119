package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// httpSession is a transcript as mcpchaos proxy writes it: no process,
// messages with their exchange and event ids, http events for the heads.
func httpSession() *tb {
	b := &tb{}
	seed := testSeed
	b.add(wire.Event{Type: wire.EventSession, Seed: &seed, URL: "http://127.0.0.1:3000/mcp", Scenario: "proxy", DeadlineMS: 5000})
	return b
}

func (b *tb) post(exchange int64, raw string) int64 {
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: exchange, HTTP: "POST /mcp"})
	return b.body(exchange, raw)
}

// body records raw, the body of the POST on exchange x, read and
// forwarded to the server.
func (b *tb) body(x int64, raw string) int64 {
	m := wire.Classify([]byte(raw))
	e := wire.Event{Type: wire.EventReceived, Exchange: x}
	e.SetMessage(wire.ToServer, &m)
	seq := b.add(e)
	b.add(wire.Event{Type: wire.EventForwarded, Dir: "c2s", Of: seq, Exchange: x})
	return seq
}

func (b *tb) event(exchange int64, eventID, raw string, delivered bool) int64 {
	m := wire.Classify([]byte(raw))
	e := wire.Event{Type: wire.EventReceived, Exchange: exchange, EventID: eventID}
	e.SetMessage(wire.ToClient, &m)
	seq := b.add(e)
	if delivered {
		b.add(wire.Event{Type: wire.EventForwarded, Dir: "s2c", Of: seq, Exchange: exchange})
	} else {
		b.add(wire.Event{Type: wire.EventDropped, Dir: "s2c", Of: seq, Exchange: exchange, Detail: "the client's stream was cut by fault eof#1 before this message"})
	}
	return seq
}

func TestJudgeHTTPSessions(t *testing.T) {
	answer := func(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, id) }
	for _, tc := range []struct {
		name  string
		build func(b *tb)
		want  []string // rule of each finding
	}{
		{"a 400 to server/discover answers it: the client falls back to initialize", func(b *tb) {
			seq := b.post(1, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`)
			b.at(10).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 400, Of: seq, Detail: "response: application/json; the error status answers the request"})
			b.post(2, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`)
			b.at(20).event(2, "", `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, true)
		}, nil},
		{"a 400 without the request named answers nothing", func(b *tb) {
			b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
			b.at(10).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 400})
		}, []string{reports.RuleUnanswered}},
		{"an answer replayed on resumption under its event id is one answer", func(b *tb) {
			b.post(1, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`)
			b.at(10).event(1, "ev-9", answer(4), false)
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "GET /mcp", Detail: "Last-Event-ID: ev-8"})
			b.at(1000).event(2, "ev-9", answer(4), true)
		}, nil},
		{"an answer the client already had, replayed on a resumed stream, is a duplicate", func(b *tb) {
			// server-everything's event store replays every stream's
			// events after the Last-Event-ID, not only the cut one's.
			b.post(1, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`)
			b.at(5).event(1, "ev-3", answer(3), true)
			b.post(2, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`)
			b.at(10).event(2, "ev-4", answer(4), false)
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 3, HTTP: "GET /mcp", Detail: "Last-Event-ID: ev-2"})
			b.at(1000).event(3, "ev-3", answer(3), true)
			b.at(1000).event(3, "ev-4", answer(4), true)
		}, []string{reports.RuleDuplicateResponse}},
		{"a second answer under another event id is a duplicate", func(b *tb) {
			b.post(1, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`)
			b.at(10).event(1, "ev-9", answer(4), true)
			b.at(20).event(1, "ev-10", answer(4), true)
		}, []string{reports.RuleDuplicateResponse}},
		{"an HTTP error refusing a notification may carry an error with id null", func(b *tb) {
			b.post(1, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
			b.at(10).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 400, Detail: "response: application/json"})
			b.at(11).event(1, "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"missing _meta"}}`, true)
		}, nil},
		{"a 404 whose body's error has an id no request has is a warning", func(b *tb) {
			// mcp 1.x (FastMCP 2.12 on mcp 1.16) once the session was
			// deleted: the status answers the call, the body's id is
			// the SDK's "server-error".
			seq := b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
			b.at(10).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 404, Of: seq, Detail: "response: application/json; the error status answers the request"})
			b.at(11).event(1, "", `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Not Found: Session has been terminated"}}`, true)
		}, []string{reports.RuleErrorBodyID}},
		{"a 404 whose body's error carries the request's own id is its one answer", func(b *tb) {
			// What the C# SDK writes since its PR #1687, and what
			// JSON-RPC asks of an id the server could read.
			seq := b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
			b.at(10).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 404, Of: seq, Detail: "response: application/json; the error status answers the request"})
			b.at(11).event(1, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Session not found"}}`, true)
		}, nil},
		{"an error with an id no request has on a 200 stream answers nothing", func(b *tb) {
			b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
			b.at(10).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 200, Detail: "response: text/event-stream"})
			b.at(11).event(1, "", `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"?"}}`, true)
			b.at(12).event(1, "", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, true)
		}, []string{reports.RuleUnknownResponse}},
		{"an error with id null on a 200 stream answers nothing", func(b *tb) {
			b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
			b.at(10).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 200, Detail: "response: text/event-stream"})
			b.at(11).event(1, "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"?"}}`, true)
			b.at(12).event(1, "", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, true)
		}, []string{reports.RuleUnknownResponse}},
		// test --url -- CMD: the run starts the server and stops it with
		// SIGTERM, since an HTTP server has no stdin to close.
		{"an HTTP server SIGTERM ends is no zombie, and no crash with status 143", func(b *tb) {
			b.add(wire.Event{Type: wire.EventProcessStarted, PID: 7})
			b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
			b.at(10).event(1, "", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, true)
			b.at(100).add(wire.Event{Type: wire.EventSignal, Signal: "SIGTERM", PID: 7, ByUs: true, Detail: "the server is stopped: the probe client ended its session"})
			code := 143
			b.at(150).add(wire.Event{Type: wire.EventProcessExited, PID: 7, ExitCode: &code})
		}, nil},
		{"an HTTP server that needs SIGKILL is a zombie, a warning", func(b *tb) {
			b.add(wire.Event{Type: wire.EventProcessStarted, PID: 7})
			b.at(100).add(wire.Event{Type: wire.EventSignal, Signal: "SIGTERM", PID: 7, ByUs: true, Detail: "the server is stopped: the probe client ended its session"})
			b.at(3100).add(wire.Event{Type: wire.EventSignal, Signal: "SIGKILL", PID: 7, ByUs: true, Detail: "the server did not exit within 3s of SIGTERM"})
			b.at(3110).add(wire.Event{Type: wire.EventProcessExited, PID: 7, Signal: "SIGKILL", ByUs: true})
		}, []string{reports.RuleHTTPShutdownSIGKILL}},
		{"a traceback the HTTP server survived until SIGTERM is a handled exception", func(b *tb) {
			b.add(wire.Event{Type: wire.EventProcessStarted, PID: 7})
			b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
			b.at(10).event(1, "", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, true)
			for _, l := range []string{"Traceback (most recent call last):", `  File "x.py", line 1, in f`, "anyio.ClosedResourceError"} {
				e := wire.Event{Type: wire.EventStderr}
				e.SetRaw([]byte(l + "\n"))
				b.at(20).add(e)
			}
			b.at(100).add(wire.Event{Type: wire.EventSignal, Signal: "SIGTERM", PID: 7, ByUs: true, Detail: "the server is stopped"})
			code := 0
			b.at(150).add(wire.Event{Type: wire.EventProcessExited, PID: 7, ExitCode: &code})
		}, nil},
		{"an HTTP server that dies mid-call loses the call and crashed", func(b *tb) {
			b.add(wire.Event{Type: wire.EventProcessStarted, PID: 7})
			b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
			code := 1
			b.at(50).add(wire.Event{Type: wire.EventProcessExited, PID: 7, ExitCode: &code})
		}, []string{reports.RuleLostResponse, reports.RuleCrashExit}},
		{"the calls in flight when a fault ended the session are not owed", func(b *tb) {
			b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
			seq := b.post(2, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)
			b.at(5).add(wire.Event{Type: wire.EventFault, Fault: "end-session#1", Action: "end-session", Of: seq, Detail: "end the session at the server (DELETE)"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 3, HTTP: "DELETE /mcp (sent by fault end-session#1)"})
			b.at(6).add(wire.Event{Type: wire.EventHTTP, Exchange: 3, Status: 200})
			// One answer comes anyway; a later call is refused 404.
			b.at(20).event(1, "", answer(1), true)
			later := b.post(4, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`)
			b.at(30).add(wire.Event{Type: wire.EventHTTP, Exchange: 4, Status: 404, Of: later})
		}, nil},
		{"a session served after its DELETE was accepted", func(b *tb) {
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, HTTP: "DELETE /mcp (sent by fault end-session#1)", MCPSession: "s1", Fault: "end-session#1"})
			b.at(5).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 200, Detail: "the server answered the session's DELETE with 200"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "POST /mcp", MCPSession: "s1"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 200, Detail: "response: application/json"})
		}, []string{reports.RuleServedAfterDelete}},
		{"a 202 mcpchaos answered itself after the DELETE is not the server serving", func(b *tb) {
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, HTTP: "DELETE /mcp (sent by fault end-session#1)", MCPSession: "s1", Fault: "end-session#1"})
			b.at(5).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 200, Detail: "the server answered the session's DELETE with 200"})
			// The client answers a liveness ping: mcpchaos swallows it.
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "POST /mcp", MCPSession: "s1"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 202, ByUs: true, Detail: "answered by mcpchaos, not the upstream"})
		}, nil},
		{"a call in flight when the DELETE came may be answered; a later one gets 404", func(b *tb) {
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, HTTP: "POST /mcp", MCPSession: "s1"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "DELETE /mcp", MCPSession: "s1"})
			b.at(5).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 200})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 200, Detail: "response: application/json"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 3, HTTP: "POST /mcp", MCPSession: "s1"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 3, Status: 404})
		}, nil},
		{"a call sent while the fault's DELETE was on its way raced the end: not owed", func(b *tb) {
			seq := b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots"}}`)
			b.at(5).add(wire.Event{Type: wire.EventFault, Fault: "end-session#1", Action: "end-session", Of: seq, Detail: "end the session at the server (DELETE)"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "DELETE /mcp (sent by fault end-session#1)", MCPSession: "s1"})
			b.at(6).post(3, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots"}}`)
			b.at(8).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 200})
		}, nil},
		{"a call received but not yet forwarded when the DELETE was accepted may be answered", func(b *tb) {
			// The proxy serves exchanges on goroutines of their own: call
			// 2's forwarded event can come after the DELETE's answer,
			// and its answer after that (seen in CI on the bundled server).
			seq := b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "POST /mcp"})
			m := wire.Classify([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`))
			e := wire.Event{Type: wire.EventReceived, Exchange: 2}
			e.SetMessage(wire.ToServer, &m)
			second := b.add(e)
			b.at(5).add(wire.Event{Type: wire.EventFault, Fault: "end-session#1", Action: "end-session", Of: seq, Detail: "end the session at the server (DELETE)"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 3, HTTP: "DELETE /mcp (sent by fault end-session#1)"})
			b.at(6).add(wire.Event{Type: wire.EventHTTP, Exchange: 3, Status: 200})
			b.add(wire.Event{Type: wire.EventForwarded, Dir: "c2s", Of: second, Exchange: 2})
			b.at(20).event(2, "", answer(2), true)
		}, nil},
		{"a DELETE refused 405 leaves the session served", func(b *tb) {
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, HTTP: "DELETE /mcp", MCPSession: "s1"})
			b.at(5).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 405})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "POST /mcp", MCPSession: "s1"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 202})
		}, nil},
		{"a call still sending on its own stream when the wait ends is slow, not stuck (a warning)", func(b *tb) {
			streamingCall(b, 1, 9)
		}, []string{reports.RuleUnansweredActive}},
		{"a call whose stream fell silent for a deadline before the end is stuck", func(b *tb) {
			streamingCall(b, 1, 2)
		}, []string{reports.RuleUnanswered}},
		{"notifications on another stream say nothing of the call", func(b *tb) {
			b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work"}}`)
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "GET /mcp"})
			for s := 1; s <= 9; s++ {
				b.at(float64(s*1000)).event(2, "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tick"}}`, true)
			}
		}, []string{reports.RuleUnanswered}},
		{"a skipped end-session settles nothing", func(b *tb) {
			seq := b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
			b.at(5).add(wire.Event{Type: wire.EventFault, Fault: "end-session#1", Action: "end-session", Of: seq, Detail: "skipped: the session has no Mcp-Session-Id"})
		}, []string{reports.RuleUnanswered}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := httpSession()
			tc.build(b)
			b.at(10000).end("the proxy got interrupt")
			v := Session(b.evs)
			got := rulesOf(v)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s\nverdict %+v", diff, v)
			}
			if len(v.Indeterminate) != 0 {
				t.Errorf("indeterminate: %q", v.Indeterminate)
			}
		})
	}
}

// streamingCall posts a tools/call on exchange x whose response stream
// carries a logging notification each second up to the last, and no answer:
// the TypeScript SDK's start-notification-stream example tool, which runs
// for longer than the deadline.
func streamingCall(b *tb, x int64, last int) {
	b.post(x, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"start-notification-stream"}}`)
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, Status: 200, Detail: "response: text/event-stream"})
	for s := 1; s <= last; s++ {
		b.at(float64(s*1000)).event(x, fmt.Sprint(s), `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tick"}}`, true)
	}
}

// The finding for a slow call says what the server was doing and why the
// call still counts against it.
func TestJudgeSlowCallSaysItRuns(t *testing.T) {
	b := httpSession()
	streamingCall(b, 1, 9)
	b.at(10000).end("the proxy got interrupt")
	v := Session(b.evs)
	if len(v.Findings) != 1 {
		t.Fatalf("findings %+v; want one", v.Findings)
	}
	f := v.Findings[0]
	want := "tools/call (id 1) unanswered after 5s, but the server kept sending on the request's stream (9 notifications, the last at 9s), so its handler runs, slower than the deadline; " +
		"only progress notifications for the request's token restart a deadline, so a client would have given up on it"
	if f.Message != want || f.Severity != reports.SeverityWarning || f.Kind != reports.KindHang {
		t.Errorf("finding %s %s %q;\nwant hang warning %q", f.Kind, f.Severity, f.Message, want)
	}
}

// A 5xx whose body carries a traceback is a crash named by its signature,
// whether the body is the text Starlette writes in debug mode or the HTML
// page of Express's development error handler; a bare 500, a 503 without a
// stack, and a status a fault injected are not.
func TestHTTPCrashInA5xxBody(t *testing.T) {
	starlette := "Traceback (most recent call last):\n  File \"/app/server.py\", line 12, in handle\n    return 1 / 0\nZeroDivisionError: division by zero\n"
	express := "<!DOCTYPE html>\n<html lang=\"en\">\n<head><title>Error</title></head>\n<body>\n<pre>TypeError: Cannot read properties of undefined (reading &#39;id&#39;)<br> &nbsp; &nbsp;at handle (/app/server.js:10:20)<br> &nbsp; &nbsp;at Layer.handle [as handle_request] (/app/node_modules/express/lib/router/layer.js:95:5)</pre>\n</body>\n</html>\n"
	for _, tc := range []struct {
		name, body, fault string
		status            int
		want              []string // signature of each finding
		message           string
	}{
		{"Starlette's debug traceback", starlette, "", 500, []string{"python:ZeroDivisionError"},
			"the server answered a tools/call request with HTTP 500 whose body carries Python exception ZeroDivisionError: division by zero: an exception escaped its handler to the HTTP layer, and the request got no JSON-RPC answer"},
		{"Express's development error page", express, "", 500, []string{"node:TypeError"},
			"the server answered a tools/call request with HTTP 500 whose body carries a Node.js error stack: TypeError: Cannot read properties of undefined (reading 'id'): an exception escaped its handler to the HTTP layer, and the request got no JSON-RPC answer"},
		{"a bare Internal Server Error", "Internal Server Error", "", 500, nil, ""},
		{"a 503 from a gateway", "<html><body><h1>503 Service Unavailable</h1></body></html>", "", 503, nil, ""},
		{"a status a fault injected", starlette, "http-error#1", 500, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := httpSession()
			seq := b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
			b.at(10).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: tc.status, Of: seq, Fault: tc.fault, Detail: "response: text/plain; the error status answers the request"})
			body := wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: tc.status, Fault: tc.fault, Detail: "response body"}
			body.SetRaw([]byte(tc.body))
			b.add(body)
			b.at(10000).end("the proxy got interrupt")
			v := Session(b.evs)
			var got []string
			for _, f := range v.Findings {
				got = append(got, f.Signature)
				if f.Rule != reports.RuleCrashHTTPStatus {
					t.Errorf("finding %s: %s", f.Rule, f.Message)
				}
				if tc.message != "" && f.Message != tc.message {
					t.Errorf("message:\n got %s\nwant %s", f.Message, tc.message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("signatures (-want +got):\n%s\nverdict %+v", diff, v)
			}
		})
	}
}

// An answer a fault cut off the client's stream is noted when the server
// gave it no event id: no resumption can bring it back, which a passing
// cut-before-result would otherwise leave unsaid. With an event id, the
// resumption's verdicts say what became of it.
func TestJudgeNotesAnAnswerNoResumptionCanBringBack(t *testing.T) {
	for _, tc := range []struct {
		eventID string
		want    []string
	}{
		{"", []string{"the answer to tools/call (id 4) never reached the client (the client's stream was cut by fault eof#1 before this message), and no resumption could bring it back: " +
			"the server sent it with no event id (resumability is optional; MCP 2025-11-25, Basic › Transports › Streamable HTTP › Resumability and Redelivery)"}},
		{"ev-4", nil},
	} {
		b := httpSession()
		b.post(1, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`)
		b.at(10).event(1, tc.eventID, `{"jsonrpc":"2.0","id":4,"result":{"content":[]}}`, false)
		b.at(10000).end("the proxy got interrupt")
		v := Session(b.evs)
		if diff := cmp.Diff(tc.want, v.Notes); diff != "" || len(v.Findings) > 0 {
			t.Errorf("event id %q: notes (-want +got):\n%s\nfindings %+v", tc.eventID, diff, v.Findings)
		}
	}
}

// On HTTP a peer's frames are bodies and SSE events, not lines on stdout:
// a finding that told a server author to stop logging to stdout would send
// them looking in the wrong place.
func TestHTTPNotMCPNamesBodiesAndEvents(t *testing.T) {
	for _, tc := range []struct {
		name, frame, want string
	}{
		{"text", "hello world",
			"a body or SSE event whose data is not a JSON object (each carries one JSON-RPC message) (1 frame from the server)"},
		{"broken JSON", `{"jsonrpc":"2.0","id":1,"result":`,
			"a body or SSE event whose data is not valid JSON (not JSON: unexpected end of frame) (1 frame from the server)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := httpSession()
			b.post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
			b.at(10).event(1, "", tc.frame, true)
			b.at(11).event(1, "", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`, true)
			b.at(10000).end("the proxy got interrupt")
			var got []string
			for _, f := range Session(b.evs).Findings {
				got = append(got, f.Rule+": "+f.Message)
			}
			if diff := cmp.Diff([]string{reports.RuleNotMCP + ": " + tc.want}, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// An SDK's sentinel id repeats in every refused request's body: the
// finding counts the bodies and names the id once (FastMCP 2.12's three
// 404s after end-session-inflight listed "server-error" three times).
func TestErrorBodyIDNamesEachIDOnce(t *testing.T) {
	b := httpSession()
	for n := int64(1); n <= 3; n++ {
		seq := b.post(n, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"x"}}`, n))
		b.at(float64(10 * n)).add(wire.Event{Type: wire.EventHTTP, Exchange: n, Status: 404, Of: seq, Detail: "response: application/json; the error status answers the request"})
		b.at(float64(10*n+1)).event(n, "", `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Not Found: Session has been terminated"}}`, true)
	}
	b.at(10000).end("the proxy got interrupt")
	v := Session(b.evs)
	if len(v.Findings) != 1 || v.Findings[0].Rule != reports.RuleErrorBodyID {
		t.Fatalf("findings %+v; want one %s", v.Findings, reports.RuleErrorBodyID)
	}
	want := `the server answered 3 requests with HTTP 404, whose bodies hold an error with an id no request has ("server-error"): `
	if msg := v.Findings[0].Message; !strings.HasPrefix(msg, want) {
		t.Errorf("message:\n%s\nwant it to start:\n%s", msg, want)
	}
}

// Two clients through one proxy each number their requests from 1: an
// answer on a POST's stream answers that POST's request, so the one left
// unanswered is the other client's, and the finding cites its request.
func TestAnswerOnItsOwnExchangeAcrossClients(t *testing.T) {
	b := httpSession()
	first := b.post(1, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a"}}`)
	second := b.post(2, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"b"}}`)
	b.at(10).event(2, "", `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`, true)
	b.at(10000).end("the proxy got interrupt")
	v := Session(b.evs)
	if diff := cmp.Diff([]string{reports.RuleUnanswered}, rulesOf(v)); diff != "" {
		t.Fatalf("rules (-want +got):\n%s", diff)
	}
	f := v.Findings[0]
	if f.Request == nil || f.Request.Tool != "a" || f.Evidence[0].Seq != first {
		t.Errorf("the hang names %+v at seq %d; want the first client's call (tool a, seq %d), not the second's (seq %d)", f.Request, f.Evidence[0].Seq, first, second)
	}
}

// Several clients through one proxy each set their own log level: a debug
// message on the stream of the client that asked for debug is not below
// the level another client set, and one on the stream of the client that
// asked for error is.
func TestLogLevelsOfSeveralClients(t *testing.T) {
	for _, tc := range []struct {
		name    string
		session string // whose GET stream carries the debug message
		want    []string
	}{
		{"to the client that set debug", "A", nil},
		{"to the client that set error", "B", []string{reports.RuleLogBelowLevel}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := httpSession()
			setLevel := func(x int64, session, id, level string) {
				b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, HTTP: "POST /mcp", MCPSession: session})
				b.body(x, `{"jsonrpc":"2.0","id":`+id+`,"method":"logging/setLevel","params":{"level":"`+level+`"}}`)
				b.event(x, "", `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`, true)
			}
			setLevel(1, "A", "3", "debug")
			setLevel(2, "B", "3", "error")
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 3, HTTP: "GET /mcp", MCPSession: tc.session})
			b.at(1000).event(3, "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"x"}}`, true)
			b.at(2000).end("the proxy got interrupt")
			if diff := cmp.Diff(tc.want, rulesOf(Session(b.evs))); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}

// Several clients through one proxy each list their tasks: a listing holds
// the tasks of the session that asked for it (issue 39: proxy --report
// judges each session apart). A task another client created, listed to
// this one, is as foreign as one nobody here created.
func TestTaskListsOfSeveralClients(t *testing.T) {
	for _, tc := range []struct {
		name    string
		session string // whose tasks/list lists task t1, which A created
		want    []string
	}{
		{"listed to the client that created it", "A", nil},
		{"listed to another client", "B", []string{reports.RuleTaskNotOwned}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := httpSession()
			call := func(x int64, session, raw, answer string) {
				b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, HTTP: "POST /mcp", MCPSession: session})
				b.body(x, raw)
				b.event(x, "", answer, true)
			}
			call(1, "A", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"research","arguments":{},"task":{"ttl":60000}}}`,
				`{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"t1","status":"completed","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}}}`)
			call(2, tc.session, `{"jsonrpc":"2.0","id":4,"method":"tasks/list","params":{}}`,
				`{"jsonrpc":"2.0","id":4,"result":{"tasks":[{"taskId":"t1","status":"completed","ttl":60000,"createdAt":"x","lastUpdatedAt":"x"}]}}`)
			b.at(2000).end("the proxy got interrupt")
			if diff := cmp.Diff(tc.want, rulesOf(Session(b.evs))); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}
