package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

const (
	oldSession    = "b8de62a3-5e0c-4ae1-ac60-226faf10e8b7"
	forgedSession = "a4c123b1-612d-4272-a137-1c17149d4395"
	newSession    = "0b1c2d3e-4f50-4a1b-9c2d-3e4f5a6b7c01"
)

// exch is one exchange of an HTTP transcript as the proxy records it: the
// request line, the POSTed message, the forget-session rewrite when the
// session was forgotten, its forwarding, and the server's status (an
// error status names the request it answers).
func (b *tb) exch(n int64, session, raw string, forged bool, status int) int64 {
	seq := b.send(n, session, raw, forged)
	b.answer(n, status, seq)
	return seq
}

// send is the first half of exch: the request on its way.
func (b *tb) send(n int64, session, raw string, forged bool) int64 {
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: n, HTTP: "POST /mcp", MCPSession: session})
	m := wire.Classify([]byte(raw))
	e := wire.Event{Type: wire.EventReceived, Exchange: n}
	e.SetMessage(wire.ToServer, &m)
	seq := b.add(e)
	if forged {
		b.add(wire.Event{Type: wire.EventHTTP, Exchange: n, MCPSession: forgedSession, Fault: "forget-session#1", Action: "forget-session",
			Detail: "sent on with Mcp-Session-Id " + forgedSession + ", which the server never issued, in place of the client's " + session + " (fault forget-session#1)"})
	}
	b.add(wire.Event{Type: wire.EventForwarded, Dir: "c2s", Of: seq, Exchange: n})
	return seq
}

// answer is the second half of exch: the server's status on exchange n,
// whose POSTed message is of event seq.
func (b *tb) answer(n int64, status int, seq int64) {
	head := wire.Event{Type: wire.EventHTTP, Exchange: n, Status: status, Detail: "response: application/json"}
	if status >= 400 && b.evs[seq-1].Kind == "request" {
		head.Of = seq
	}
	b.add(head)
}

func toolCallRaw(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`, id)
}

const initRaw = `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`

// forgetFired is the fault event of forget-session on the call of seq.
func (b *tb) forgetFired() {
	b.add(wire.Event{Type: wire.EventFault, Fault: "forget-session#1", Action: "forget-session", MCPSession: oldSession,
		Detail: "forget session " + oldSession + " at the server: from now on its requests go on with Mcp-Session-Id " + forgedSession + ", which the server never issued"})
}

func TestJudgeServerOfAForgottenSession(t *testing.T) {
	answered := func(b *tb, x int64, id int) {
		b.event(x, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, id), true)
	}
	for _, tc := range []struct {
		name  string
		build func(b *tb)
		want  []string // rule of each finding
		note  string
	}{
		{"404 for an id it never issued: what a client starts over on", func(b *tb) {
			b.forgetFired()
			b.exch(1, oldSession, toolCallRaw(1), true, 404)
			b.exch(2, oldSession, toolCallRaw(2), true, 404)
		}, nil, ""},
		{"400 for an id it never issued: a warning", func(b *tb) {
			b.forgetFired()
			b.exch(1, oldSession, toolCallRaw(1), true, 400)
			b.exch(2, oldSession, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, true, 400)
		}, []string{reports.RuleUnknownSessionNot404}, ""},
		{"served under an id it never issued: a note, no finding", func(b *tb) {
			b.forgetFired()
			x := b.exch(1, oldSession, toolCallRaw(1), true, 200)
			_ = x
			answered(b, 1, 1)
		}, nil, "keeps no session it could forget"},
		{"a 405 to a GET under the forged id says nothing of sessions", func(b *tb) {
			b.forgetFired()
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, HTTP: "GET /mcp", MCPSession: oldSession})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, MCPSession: forgedSession, Fault: "forget-session#1", Action: "forget-session"})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 405})
		}, nil, ""},
		{"a 400 to the client's own id is not this check's", func(b *tb) {
			b.exch(1, oldSession, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, 400)
		}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := httpSession()
			tc.build(b)
			b.at(10000).end("the proxy got interrupt")
			v := Session(b.evs)
			var got []string
			for _, f := range v.Findings {
				got = append(got, f.Rule)
				checkRule(t, f)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s\nverdict %+v", diff, v)
			}
			notes := strings.Join(v.Notes, "\n")
			if tc.note != "" && !strings.Contains(notes, tc.note) || tc.note == "" && strings.Contains(notes, "forget") {
				t.Errorf("notes %q; want one saying %q", v.Notes, tc.note)
			}
		})
	}
}

// The warning says what was answered, to what, and under which forged id.
func TestUnknownSessionNot404Says(t *testing.T) {
	b := httpSession()
	b.forgetFired()
	b.exch(1, oldSession, toolCallRaw(1), true, 400)
	// The body after the head: what the server said, not a second status.
	body := wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 400, Detail: "response body"}
	body.SetRaw([]byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`))
	b.add(body)
	b.exch(2, oldSession, toolCallRaw(2), true, 400)
	b.exch(3, oldSession, toolCallRaw(3), true, 500)
	b.at(10000).end("the proxy got interrupt")
	fs := Session(b.evs).Findings
	if len(fs) != 1 {
		t.Fatalf("findings %+v; want one", fs)
	}
	f := fs[0]
	for _, want := range []string{"3 POSTs", "with 400 (2), 500 (1), not 404", "not 404", "tools/call request (id 1)", "went on under " + forgedSession, "fault forget-session#1"} {
		if !strings.Contains(f.Message+f.Evidence[0].Excerpt, want) {
			t.Errorf("the finding does not say %q: %s", want, f.Message)
		}
	}
	if f.Severity != reports.SeverityWarning || len(f.Evidence) != 3 {
		t.Fatalf("severity %s, %d evidence; want a warning with the rewrite and each status", f.Severity, len(f.Evidence))
	}
	if !strings.Contains(f.Evidence[1].Excerpt, "No valid session ID provided") {
		t.Errorf("the 400's evidence is %q; want its body", f.Evidence[1].Excerpt)
	}
}

// newHTTPClientTB starts the transcript of a client program under
// test-client --server-url that may fail.
func newHTTPClientTB() *tb {
	b := newClientTB(expectFailure)()
	b.evs[0].URL = "http://127.0.0.1:3000/mcp"
	return b
}

func (b *tb) clientExit(code int) {
	b.add(wire.Event{Type: wire.EventProcessExited, Peer: "client", PID: 100, ExitCode: &code})
}

func TestJudgeClientAfterA404(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *tb)
		want  []string
		// untold is the reason the session was not judged, if any.
		untold string
	}{
		{"a new session, and the call again in it: nothing to say", func(b *tb) {
			b.forgetFired()
			b.at(10).exch(2, oldSession, toolCallRaw(1), true, 404)
			b.at(20).exch(3, "", initRaw, false, 200)
			b.at(30).exch(4, newSession, toolCallRaw(2), false, 200)
			b.at(40).clientExit(0)
		}, nil, ""},
		{"fails the call and exits, no new session: a warning", func(b *tb) {
			b.forgetFired()
			b.at(10).exch(2, oldSession, toolCallRaw(1), true, 404)
			b.at(40).clientExit(1)
		}, []string{reports.RuleNoNewSession}, ""},
		{"one retry under the dead id, then a new session: bounded", func(b *tb) {
			b.forgetFired()
			b.at(10).exch(2, oldSession, toolCallRaw(1), true, 404)
			b.at(20).exch(3, oldSession, toolCallRaw(1), true, 404)
			b.at(30).exch(4, "", initRaw, false, 200)
			b.at(40).exch(5, newSession, toolCallRaw(2), false, 200)
			b.at(50).clientExit(0)
		}, nil, ""},
		{"requests already on their way when the 404 came are no retries", func(b *tb) {
			// Three calls at once; the 404s come back in turn.
			b.forgetFired()
			var seqs []int64
			for i := range 3 {
				seqs = append(seqs, b.send(int64(2+i), oldSession, toolCallRaw(1+i), true))
			}
			for i, seq := range seqs {
				b.at(float64(10+i)).answer(int64(2+i), 404, seq)
			}
			b.at(40).clientExit(1)
		}, []string{reports.RuleNoNewSession}, ""},
		{"retries under the dead id after the 404 to a retry: an error", func(b *tb) {
			b.forgetFired()
			for i := range 5 {
				b.at(float64(10+100*i)).exch(int64(2+i), oldSession, toolCallRaw(1), true, 404)
			}
			b.at(600).clientExit(1)
		}, []string{reports.RuleDeadSessionReused}, ""},
		{"the server's 404 after the session's DELETE counts the same", func(b *tb) {
			b.at(10).exch(2, oldSession, toolCallRaw(1), false, 404)
			b.at(40).clientExit(1)
		}, []string{reports.RuleNoNewSession}, ""},
		{"a client still waiting at its deadline is the hang's", func(b *tb) {
			b.forgetFired()
			b.at(10).exch(2, oldSession, toolCallRaw(1), true, 404)
			b.at(10000).add(wire.Event{Type: wire.EventSignal, Peer: "client", PID: 100, Signal: "SIGTERM", ByUs: true})
			b.at(10100).add(wire.Event{Type: wire.EventProcessExited, Peer: "client", PID: 100, Signal: "SIGTERM", ByUs: true})
		}, []string{reports.RuleClientHang}, ""},
		{"a 404 to a probe of mcpchaos's tells the client nothing", func(b *tb) {
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "POST /mcp (liveness probe of mcpchaos)", MCPSession: oldSession})
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 404})
			b.at(40).clientExit(0)
		}, nil, ""},
		{"a server that refuses the forgotten session 400 never tells the client", func(b *tb) {
			b.forgetFired()
			b.at(10).exch(2, oldSession, toolCallRaw(1), true, 400)
			b.at(40).clientExit(1)
		}, nil, "answered 1 with 400, never with 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newHTTPClientTB()
			tc.build(b)
			b.at(20000).end("the client exited")
			v := Session(b.evs)
			var got []string
			for _, f := range v.Findings {
				got = append(got, f.Rule)
				checkRule(t, f)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s\nverdict %+v", diff, v)
			}
			untold := strings.Join(v.Indeterminate, "\n")
			if tc.untold == "" && untold != "" || !strings.Contains(untold, tc.untold) {
				t.Errorf("indeterminate %q; want %q", v.Indeterminate, tc.untold)
			}
		})
	}
}

// The error says how often the client went back to the dead id, and that
// it never started over.
func TestDeadSessionReusedSays(t *testing.T) {
	b := newHTTPClientTB()
	b.forgetFired()
	for i := range 4 {
		b.at(float64(10+100*i)).exch(int64(2+i), oldSession, toolCallRaw(1), true, 404)
	}
	b.at(600).clientExit(1)
	b.end("the client exited")
	fs := Session(b.evs).Findings
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	for _, want := range []string{"with 404 (at 10ms)", "3 more requests under the dead id", "the last at 310ms", "never started a new session", oldSession[:20]} {
		if !strings.Contains(fs[0].Message, want) {
			t.Errorf("the finding does not say %q: %s", want, fs[0].Message)
		}
	}
}
