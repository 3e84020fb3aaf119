package crosssession

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// script builds one session's record: the events a proxy would record.
type script struct {
	n      int
	events []wire.Event
	ex     int64
}

func newScript(n int, marker string, faults ...string) *script {
	s := &script{n: n}
	seed := uint64(1)
	s.add(wire.Event{Type: wire.EventSession, Scenario: "sessions", Seed: &seed, Repro: "mcpchaos test --scenario sessions", Session: n, Sessions: 2, Marker: marker, Faults: faults})
	return s
}

func (s *script) add(e wire.Event) *script {
	e.Seq = int64(len(s.events) + 1)
	e.T = e.Seq * 1000
	s.events = append(s.events, e)
	return s
}

// testSessionIDs are the Mcp-Session-Id the server issued session n.
var testSessionIDs = []string{"", "b3e4f0a2-7c91-4d58-9e6a-2f0c8d1b5a73", "5d9a1c7e-0b2f-4e83-a6d4-91c0f7e2b3a8", "e2c7b19d-4a05-4f6e-8d3b-6a9f0c1e7d52"}

// call records a request the client POSTed in an exchange of its own,
// in its session once initialize has opened one.
func (s *script) call(id, method, raw string) *script {
	s.ex++
	line := wire.Event{Type: wire.EventHTTP, Exchange: s.ex, HTTP: "POST /mcp"}
	if method != "initialize" && s.n < len(testSessionIDs) {
		line.MCPSession = testSessionIDs[s.n]
	}
	s.add(line)
	e := wire.Event{Type: wire.EventReceived, Dir: "c2s", Kind: "request", ID: id, Method: method, Exchange: s.ex}
	if i := strings.Index(raw, `"progressToken":"`); i >= 0 {
		rest := raw[i+len(`"progressToken":"`):]
		e.ProgressToken = `"` + rest[:strings.Index(rest, `"`)] + `"`
	}
	e.SetRaw([]byte(raw))
	return s.add(e)
}

// status records the HTTP status answering the latest exchange.
func (s *script) status(code int) *script {
	return s.add(wire.Event{Type: wire.EventHTTP, Exchange: s.ex, Status: code})
}

// got records a message from the server.
func (s *script) got(kind, id, method, raw string) *script {
	e := wire.Event{Type: wire.EventReceived, Dir: "s2c", Kind: kind, ID: id, Method: method, Exchange: s.ex}
	e.SetRaw([]byte(raw))
	return s.add(e)
}

func (s *script) opened() *script {
	return s.call("1", "initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`).
		got("response", "1", "", `{"jsonrpc":"2.0","id":1,"result":{}}`)
}

func echo(id, marker string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"_meta":{"progressToken":"%s-progress-1"},"name":"echo","arguments":{"text":"%s"}}}`, id, marker, marker)
}

func echoed(id, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, text)
}

func setLevel(level string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"` + level + `"}}`
}

func logLine(level string) string {
	return `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"` + level + `","data":"a line"}}`
}

func finding(rule, id, method string, seq int64) reports.Finding {
	f := reports.NewFinding(rule, rule+" of "+id, []reports.Evidence{{Seq: seq, Type: "received"}})
	f.Request = &reports.Request{ID: id, Method: method}
	return f
}

// got is what a verdict says, in short: each finding's rule and sessions,
// then the notes and reasons for indeterminate.
type got struct {
	Findings      []string
	Notes         []string
	Indeterminate []string
}

func summarize(v judge.Verdict) got {
	var g got
	for _, f := range v.Findings {
		g.Findings = append(g.Findings, fmt.Sprintf("%s %v", f.Rule, f.Sessions))
	}
	g.Notes, g.Indeterminate = v.Notes, v.Indeterminate
	return g
}

func TestVerdict(t *testing.T) {
	m1, m2 := Marker(1, 1), Marker(1, 2)
	tests := []struct {
		name     string
		sessions func() []*script
		per      []judge.Verdict
		want     got
		// says, if set, is a phrase the first finding's message holds.
		says string
	}{
		{
			name: "each session gets its own",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().call("2", "tools/call", echo("2", m1)).got("response", "2", "", echoed("2", m1)),
					newScript(2, m2).opened().call("2", "tools/call", echo("2", m2)).got("response", "2", "", echoed("2", m2)),
				}
			},
		},
		{
			name: "session ids numbered one after the other: guessable",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().add(wire.Event{Type: wire.EventHTTP, Exchange: 9, HTTP: "POST /mcp", MCPSession: "4f1c9a7e52b44d0e8a619b2f-1000041"}),
					newScript(2, m2).opened().add(wire.Event{Type: wire.EventHTTP, Exchange: 9, HTTP: "POST /mcp", MCPSession: "4f1c9a7e52b44d0e8a619b2f-1000042"}),
				}
			},
			want: got{Findings: []string{"session-id-guessable [1 2]"}},
			says: `the server issued session ids "4f1c9a7e52b44d0e8a619b2f-1000041" and "4f1c9a7e52b44d0e8a619b2f-1000042"`,
		},
		{
			name: "UUIDs, and a DELETE of mcpchaos's own: nothing",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().add(wire.Event{Type: wire.EventHTTP, Exchange: 9, HTTP: "DELETE /mcp (sent by fault end-session#1)", MCPSession: "1"}).
						add(wire.Event{Type: wire.EventHTTP, Exchange: 10, HTTP: "POST /mcp", MCPSession: "3f1c9a7e-52b4-4d0e-8a61-9b2f7c4d1e08"}),
					newScript(2, m2).opened().add(wire.Event{Type: wire.EventHTTP, Exchange: 9, HTTP: "POST /mcp", MCPSession: "a94e0d2b-6c7f-4b13-9e58-0f2d1c6b7a39"}),
				}
			},
		},
		{
			name: "an answer echoing another session's text",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().call("2", "tools/call", echo("2", m1)),
					newScript(2, m2).opened().call("2", "tools/call", echo("2", m2)).got("response", "2", "", echoed("2", m1)).got("response", "2", "", echoed("2", m2)),
				}
			},
			per:  []judge.Verdict{{Findings: []reports.Finding{finding(reports.RuleUnanswered, "2", "tools/call", 5)}}, {}},
			want: got{Findings: []string{"cross-session-message [1 2]"}},
			says: "the answer to its tools/call of echo (id 2) carrying session 1's data and not its own",
		},
		{
			name: "progress for another session's token",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().call("2", "tools/call", echo("2", m1)).got("response", "2", "", echoed("2", m1)),
					newScript(2, m2).opened().call("2", "tools/call", echo("2", m2)).
						got("notification", "", "notifications/progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"`+m1+`-progress-1","progress":1}}`).
						got("response", "2", "", echoed("2", m2)),
				}
			},
			want: got{Findings: []string{"cross-session-message [1 2]"}},
			says: "a notifications/progress for session 1's progress token",
		},
		{
			name: "shared state read back by a request that named nothing of its own",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().call("2", "tools/call", echo("2", m1)).got("response", "2", "", echoed("2", m1)),
					newScript(2, m2).opened().call("2", "tools/call", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`).
						got("response", "2", "", echoed("2", m1+" "+m2)).
						got("notification", "", "notifications/tools/list_changed", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"by":"`+m1+`"}}`),
				}
			},
		},
		{
			name: "an echo of both is not a crossing",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().call("2", "tools/call", echo("2", m1)).got("response", "2", "", echoed("2", m1)),
					newScript(2, m2).opened().call("2", "tools/call", echo("2", m2)).got("response", "2", "", echoed("2", m2+" after "+m1)),
				}
			},
		},
		{
			name: "a log line of another session's call",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().call("2", "tools/call", echo("2", m1)).got("response", "2", "", echoed("2", m1)),
					newScript(2, m2).opened().got("notification", "", "notifications/message", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"echo `+m1+`"}}`),
				}
			},
			want: got{Findings: []string{"cross-session-message [1 2]"}},
			says: "a notifications/message carrying session 1's data",
		},
		{
			name: "text shaped like a marker that is no session's",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened(),
					newScript(2, m2).opened().got("notification", "", "notifications/message", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"mcpchaos-s1-000000"}}`),
				}
			},
		},
		{
			name: "a server of one client at a time",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened(),
					newScript(2, m2).call("1", "initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`).status(500).
						got("error", "1", "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Already connected to a transport"}}`),
				}
			},
			per: []judge.Verdict{{}, {Findings: []reports.Finding{finding(reports.RuleCrashHTTPStatus, "1", "initialize", 3)}}},
			want: got{
				Notes:         []string{"the server served one session at a time: session 2 was refused its initialize with HTTP 500 while session 1 was open, so it serves one client at a time (several clients at once, as an IDE and an agent connect, would be refused)"},
				Indeterminate: []string{"the server would not open 1 of the 1 sessions beside the first it opened, so nothing could cross between them"},
			},
		},
		{
			name: "no session opened",
			sessions: func() []*script {
				refused := func(s *script) *script {
					return s.call("1", "initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`).status(503)
				}
				return []*script{refused(newScript(1, m1)), refused(newScript(2, m2))}
			},
			want: got{
				Notes:         []string{"session 1 was refused its initialize with HTTP 503", "session 2 was refused its initialize with HTTP 503"},
				Indeterminate: []string{"none of the 2 sessions opened, so nothing ran side by side"},
			},
		},
		{
			name: "one session's end reaching the other",
			sessions: func() []*script {
				s1 := newScript(1, m1, "end-session:session=1").opened().call("2", "tools/call", echo("2", m1))
				s1.add(wire.Event{Type: wire.EventFault, Fault: "end-session#1", Spec: "end-session:session=1", Action: "end-session", Detail: "DELETE sent"})
				return []*script{
					s1,
					newScript(2, m2).opened().call("2", "tools/call", echo("2", m2)).call("3", "tools/call", echo("3", m2)).status(404),
				}
			},
			per:  []judge.Verdict{{}, {Findings: []reports.Finding{finding(reports.RuleUnanswered, "2", "tools/call", 5)}}},
			want: got{Findings: []string{"cross-session-fault [1 2]"}},
			says: "a fault confined to session 1 (end-session#1) harmed session 2, which had no fault: its tools/call (id 2) was never answered, and 1 more of its requests failed",
		},
		{
			name: "an error the other session's twin request got too is the workload's",
			sessions: func() []*script {
				s1 := newScript(1, m1, "eof:session=1").opened().call("4", "tools/call", echo("4", m1)).got("error", "4", "", `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"bad"}}`)
				s1.add(wire.Event{Type: wire.EventFault, Fault: "eof#1", Spec: "eof:session=1", Action: "eof"})
				return []*script{s1, newScript(2, m2).opened().call("4", "tools/call", echo("4", m2)).got("error", "4", "", `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"bad"}}`)}
			},
		},
		{
			name: "an error where the other session's twin got a result",
			sessions: func() []*script {
				s1 := newScript(1, m1, "eof:session=1").opened().call("4", "tools/call", echo("4", m1)).got("response", "4", "", echoed("4", m1))
				s1.add(wire.Event{Type: wire.EventFault, Fault: "eof#1", Spec: "eof:session=1", Action: "eof"})
				return []*script{s1, newScript(2, m2).opened().call("4", "tools/call", echo("4", m2)).got("error", "4", "", `{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"session closed"}}`)}
			},
			want: got{Findings: []string{"cross-session-fault [1 2]"}},
			says: "its tools/call of echo (id 4) was answered with a JSON-RPC error, where the same request in another session got its result",
		},
		{
			// Found by explore over HTTP on the bundled server (mcp-go):
			// in the stateless revision it answers an unknown method with
			// 404 and -32601, a status that then names no session.
			name: "a 404 to a request in no session (the stateless revision) is not a session gone",
			sessions: func() []*script {
				s1 := newScript(1, m1, "eof:session=1").opened()
				s1.add(wire.Event{Type: wire.EventFault, Fault: "eof#1", Spec: "eof:session=1", Action: "eof"})
				s2 := newScript(2, m2).opened()
				s2.ex++
				s2.add(wire.Event{Type: wire.EventHTTP, Exchange: s2.ex, HTTP: "POST /mcp"})
				e := wire.Event{Type: wire.EventReceived, Dir: "c2s", Kind: "request", ID: "29", Method: "mcpchaos/no-such-method", Exchange: s2.ex}
				e.SetRaw([]byte(`{"jsonrpc":"2.0","id":29,"method":"mcpchaos/no-such-method","params":{}}`))
				s2.add(e).status(404)
				return []*script{s1, s2.got("error", "29", "", `{"jsonrpc":"2.0","id":29,"error":{"code":-32601,"message":"Method mcpchaos/no-such-method not found"}}`)}
			},
		},
		{
			name: "a 404 after the session's own DELETE is its due",
			sessions: func() []*script {
				s1 := newScript(1, m1, "eof:session=1").opened()
				s1.add(wire.Event{Type: wire.EventFault, Fault: "eof#1", Spec: "eof:session=1", Action: "eof"})
				s2 := newScript(2, m2).opened()
				s2.ex++
				s2.add(wire.Event{Type: wire.EventHTTP, Exchange: s2.ex, HTTP: "DELETE /mcp"})
				return []*script{s1, s2.call("5", "ping", `{"jsonrpc":"2.0","id":5,"method":"ping"}`).status(404)}
			},
		},
		{
			name: "a crash of the one server, seen in both records, is one finding",
			sessions: func() []*script {
				return []*script{newScript(1, m1).opened(), newScript(2, m2).opened()}
			},
			per: func() []judge.Verdict {
				crash := reports.NewFinding(reports.RuleCrashSignature, "the server panicked", []reports.Evidence{{Seq: 9, Type: "stderr"}})
				crash.Signature = "go:panic"
				return []judge.Verdict{{Findings: []reports.Finding{crash}, Notes: []string{"a note of both", "a note of one"}}, {Findings: []reports.Finding{crash}, Notes: []string{"a note of both"}}}
			}(),
			want: got{Findings: []string{"crash-signature [1 2]"}, Notes: []string{"a note of both", "session 1: a note of one"}},
			says: "the server panicked (sessions 1 and 2 alike; the evidence is session 1's)",
		},
		{
			name: "an answer lost to the other client's presence, with nothing to say where it went",
			sessions: func() []*script {
				list := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
				return []*script{
					newScript(1, m1).opened().call("3", "tools/list", list).got("response", "3", "", `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`),
					newScript(2, m2).opened().call("3", "tools/list", list),
				}
			},
			per:  []judge.Verdict{{}, {Findings: []reports.Finding{finding(reports.RuleUnanswered, "3", "tools/list", 5), finding(reports.RuleUnanswered, "4", "ping", 9)}}},
			want: got{Findings: []string{"cross-session-answer-lost [2 1]"}},
			says: "session 2's tools/list (id 3) was never answered, while session 1's of the same id, sent at once, was answered: with two clients at once, and no fault having fired, the server lost one client's answer (its judge: unanswered-request of 3), and 1 more of its requests went the same way",
		},
		{
			name: "a slow handler's warning is not made an error by a twin's answer",
			sessions: func() []*script {
				list := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
				return []*script{
					newScript(1, m1).opened().call("3", "tools/list", list).got("response", "3", "", `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`),
					newScript(2, m2).opened().call("3", "tools/list", list),
				}
			},
			per:  []judge.Verdict{{}, {Findings: []reports.Finding{finding(reports.RuleUnansweredActive, "3", "tools/list", 5)}}},
			want: got{Findings: []string{"unanswered-while-active [2]"}},
		},
		{
			name: "the opening answer of one session on the other's stream (one global transport)",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().got("response", "1", "", `{"jsonrpc":"2.0","id":1,"result":{}}`),
					newScript(2, m2).call("1", "initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`),
				}
			},
			per:  []judge.Verdict{{Findings: []reports.Finding{finding(reports.RuleDuplicateResponse, "1", "initialize", 6)}}, {}},
			want: got{Findings: []string{"cross-session-message [2 1]"}},
			says: "while session 2's initialize of that id was never answered, on its own stream or at all, and its session never opened",
		},
		{
			name: "an update for the other session's subscription",
			sessions: func() []*script {
				sub := func(uri string) string {
					return `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"` + uri + `"}}`
				}
				updated := func(uri string) string {
					return `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"` + uri + `"}}`
				}
				return []*script{
					newScript(1, m1).opened().call("4", "resources/subscribe", sub("test://a")).got("notification", "", "notifications/resources/updated", updated("test://a")),
					newScript(2, m2).opened().call("4", "resources/subscribe", sub("test://b")).
						got("notification", "", "notifications/resources/updated", updated("test://b")).
						got("notification", "", "notifications/resources/updated", updated("test://a")).
						got("notification", "", "notifications/resources/updated", updated("test://c")),
				}
			},
			per:  []judge.Verdict{{}, {Findings: []reports.Finding{finding(reports.RuleUpdateNotSubscribed, "", "", 9)}}},
			want: got{Findings: []string{"cross-session-subscription [1 2]"}},
			says: "session 2 received notifications/resources/updated for test://a, which it never subscribed to and session 1 did",
		},
		{
			// The probe's first session sets info, the others debug.
			name: "a debug log line in the session that set info, once the other set debug: one level for every session",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().call("2", "logging/setLevel", setLevel("info")).got("response", "2", "", `{"jsonrpc":"2.0","id":2,"result":{}}`).
						got("notification", "", "notifications/message", logLine("debug")),
					newScript(2, m2).opened().call("2", "logging/setLevel", setLevel("debug")).got("response", "2", "", `{"jsonrpc":"2.0","id":2,"result":{}}`),
				}
			},
			per:  []judge.Verdict{{Findings: []reports.Finding{finding(reports.RuleLogBelowLevel, "", "", 8)}}, {}},
			want: got{Findings: []string{"cross-session-log-level [2 1]"}},
			says: `session 1 set logging/setLevel "info", and then received a "debug" log message after session 2 had set "debug"`,
		},
		{
			name: "a debug log line before the other session set debug: the server ignores levels, its own finding",
			sessions: func() []*script {
				return []*script{
					newScript(1, m1).opened().call("2", "logging/setLevel", setLevel("info")).got("response", "2", "", `{"jsonrpc":"2.0","id":2,"result":{}}`).
						got("notification", "", "notifications/message", logLine("debug")),
					newScript(2, m2).opened().call("3", "tools/list", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`).got("response", "3", "", `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`).
						call("2", "logging/setLevel", setLevel("debug")).got("response", "2", "", `{"jsonrpc":"2.0","id":2,"result":{}}`),
				}
			},
			per:  []judge.Verdict{{Findings: []reports.Finding{finding(reports.RuleLogBelowLevel, "", "", 8)}}, {}},
			want: got{Findings: []string{"log-below-level [1]"}},
		},
		{
			name: "an answer that went to the other session, told by ids alone",
			sessions: func() []*script {
				return []*script{newScript(1, m1).opened(), newScript(2, m2).opened()}
			},
			per: []judge.Verdict{
				{Findings: []reports.Finding{finding(reports.RuleUnanswered, "3", "tools/list", 5)}},
				{Findings: []reports.Finding{finding(reports.RuleDuplicateResponse, "3", "tools/list", 7)}},
			},
			want: got{Findings: []string{"cross-session-message [1 2]"}},
			says: "an answer to id 3 (its duplicate-response finding) while session 1's tools/list of that id was never answered",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss := tt.sessions()
			j := New(len(ss))
			// Offline, one transcript after the other: the second session's
			// record comes first, to show that order does not matter.
			for i := len(ss) - 1; i >= 0; i-- {
				for _, e := range ss[i].events {
					j.Add(ss[i].n, e)
				}
			}
			per := tt.per
			if per == nil {
				per = make([]judge.Verdict, len(ss))
			}
			v := j.Verdict(per)
			if diff := cmp.Diff(tt.want, summarize(v)); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			if tt.says != "" && !slices.ContainsFunc(v.Findings, func(f reports.Finding) bool { return strings.Contains(f.Message, tt.says) }) {
				t.Errorf("no finding's message says %q: %v", tt.says, v.Findings)
			}
			for _, f := range v.Findings {
				if f.Kind == reports.KindCrossSession && (f.Scenario != "sessions" || f.Repro == "") {
					t.Errorf("finding %s: scenario %q, repro %q: want the run's", f.Rule, f.Scenario, f.Repro)
				}
				for _, ev := range f.Evidence {
					if ev.Session == 0 {
						t.Errorf("finding %s: evidence seq %d names no session", f.Rule, ev.Seq)
					}
				}
			}
		})
	}
}

func TestMarker(t *testing.T) {
	a, b := Marker(7, 1), Marker(7, 10)
	if a == Marker(8, 1) || a == Marker(7, 2) {
		t.Errorf("markers of other seeds or sessions are alike: %s", a)
	}
	if Marker(7, 1) != a {
		t.Errorf("Marker is not a function of seed and session")
	}
	got := markedSessions([]byte(`x ` + b + `-progress-1 ` + a + `"mcpchaos-s3-zz" mcpchaos-s4-abc mcpchaos-s12345678-aaaaaa`))
	want := map[int]string{1: a, 10: b}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("markedSessions (-want +got):\n%s", diff)
	}
}
