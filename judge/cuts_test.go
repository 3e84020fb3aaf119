package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// cut records a fault's cut of exchange x, at both ends or the client's.
func (b *tb) cut(x int64, sides string) {
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, Fault: "eof#1", Cut: sides, Detail: "connection cut by fault eof#1"})
}

// legacyStream opens a legacy transport's stream on exchange x, whose
// endpoint event names endpoint.
func (b *tb) legacyStream(x int64, endpoint string) {
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, HTTP: "GET /sse", Standalone: true})
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, Status: 200, Detail: "response: text/event-stream"})
	e := wire.Event{Type: wire.EventHTTP, Exchange: x, Detail: "the legacy transport's endpoint event, rewritten to point at the proxy: http://127.0.0.1:1/x"}
	e.SetRaw([]byte("event: endpoint\ndata: " + endpoint + "\n\n"))
	b.add(e)
}

// legacyPost POSTs raw to a legacy endpoint (path and query) on exchange
// x, and records the server's status for it.
func (b *tb) legacyPost(x int64, target, raw string, status int) int64 {
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, HTTP: "POST " + target})
	seq := b.body(x, raw)
	st := wire.Event{Type: wire.EventHTTP, Exchange: x, Status: status}
	if status >= 400 {
		st.Of = seq
	}
	b.add(st)
	return seq
}

// A fault's cut at both ends is the fault's doing: what the server could
// not send on the cut exchange is noted, not held against it. A cut that
// left the server's side open is no excuse: the server's answer would have
// been read. On the legacy transport a cut ends every answer of the
// session, and a request the server accepts after it, and never answers,
// is lost.
func TestCutsAreTheFaultsDoing(t *testing.T) {
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"x"}}`, id)
	}
	answer := func(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, id) }
	for _, tc := range []struct {
		name  string
		build func(b *tb)
		want  []string // rule of each finding
		note  string   // a note that must be there
	}{
		{"a call whose stream was cut at both ends is noted", func(b *tb) {
			b.post(1, call(1))
			b.at(5).cut(1, wire.CutBoth)
		}, nil, "fault eof#1 cut the exchange its answer travels on at both ends"},
		{"a call whose stream was cut at the client's end only is owed", func(b *tb) {
			b.post(1, call(1))
			b.at(5).cut(1, wire.CutClient)
		}, []string{reports.RuleUnanswered}, ""},
		{"a cut of another call's stream excuses nothing", func(b *tb) {
			b.post(1, call(1))
			b.post(2, call(2))
			b.at(5).cut(2, wire.CutBoth)
		}, []string{reports.RuleUnanswered}, "cut the exchange its answer travels on"},
		{"a cut of the resumed stream excuses the call it resumes", func(b *tb) {
			b.post(1, call(1))
			b.at(1).event(1, "e1", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`, true)
			b.at(2).add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Detail: "stream ended: the server closed it"})
			b.at(3).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "GET /mcp", Detail: "Last-Event-ID: e1"})
			b.at(5).cut(2, wire.CutBoth)
		}, nil, "fault eof#1 cut the exchange its answer travels on at both ends"},
		{"a call answered by a replay after the cut is answered", func(b *tb) {
			b.post(1, call(1))
			b.at(1).event(1, "e1", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`, true)
			b.at(5).cut(1, wire.CutBoth)
			b.at(1000).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "GET /mcp", Detail: "Last-Event-ID: e1"})
			b.at(1010).event(2, "e2", answer(1), true)
		}, nil, ""},
		{"a server that exits when its stream is cut loses no call of the cut's", func(b *tb) {
			b.add(wire.Event{Type: wire.EventProcessStarted, PID: 7})
			b.post(1, call(1))
			b.at(5).cut(1, wire.CutBoth)
			code := 0
			b.at(50).add(wire.Event{Type: wire.EventProcessExited, PID: 7, ExitCode: &code})
		}, nil, "cut the exchange its answer travels on at both ends"},
		{"a call open while the client had no GET stream is noted", func(b *tb) {
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, HTTP: "GET /mcp", Standalone: true})
			b.at(5).cut(1, wire.CutBoth)
			b.at(6).post(2, call(1))
		}, nil, "cut the client's GET stream at both ends while it was open"},
		{"a call sent once the client reopened its GET stream is owed", func(b *tb) {
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, HTTP: "GET /mcp", Standalone: true})
			b.at(5).cut(1, wire.CutBoth)
			b.at(1005).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "GET /mcp", Standalone: true})
			b.at(1010).post(3, call(1))
		}, []string{reports.RuleUnanswered}, ""},
		{"the legacy stream's cut ends every answer of the session", func(b *tb) {
			b.legacyStream(1, "/message?sessionId=a")
			b.at(1).legacyPost(2, "/message?sessionId=a", call(1), 202)
			b.at(1).legacyPost(3, "/message?sessionId=a", call(2), 202)
			b.at(5).cut(1, wire.CutBoth)
		}, nil, "cut the legacy transport's session stream, which carries every answer, at both ends"},
		{"a request accepted on a legacy session after its stream was cut is lost", func(b *tb) {
			b.legacyStream(1, "/message?sessionId=a")
			b.at(5).cut(1, wire.CutBoth)
			b.at(500).legacyPost(2, "/message?sessionId=a", call(1), 202)
		}, []string{reports.RuleAcceptedNoStream}, ""},
		{"the endpoint may be an absolute URL", func(b *tb) {
			b.legacyStream(1, "http://localhost:8080/message?sessionId=a")
			b.at(5).cut(1, wire.CutBoth)
			b.at(500).legacyPost(2, "/message?sessionId=a", call(1), 202)
		}, []string{reports.RuleAcceptedNoStream}, ""},
		{"one refused with an error status is answered", func(b *tb) {
			b.legacyStream(1, "/message?sessionId=a")
			b.at(5).cut(1, wire.CutBoth)
			b.at(500).legacyPost(2, "/message?sessionId=a", call(1), 404)
		}, nil, ""},
		{"one sent as the stream closed may have raced the server's noticing", func(b *tb) {
			b.legacyStream(1, "/message?sessionId=a")
			b.at(5).cut(1, wire.CutBoth)
			b.at(50).legacyPost(2, "/message?sessionId=a", call(1), 202)
		}, nil, "cut the legacy transport's session stream"},
		{"one whose POST began before the cut and was read after it was in flight at the cut", func(b *tb) {
			// FastMCP of mcp 1.6.0 under get-stream-dropped, under load: the
			// POST's head reached the proxy 2 ms before the cut, its body 2
			// ms after.
			b.legacyStream(1, "/message?sessionId=a")
			b.at(3).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "POST /message?sessionId=a"})
			b.at(5).cut(1, wire.CutBoth)
			b.at(7).body(2, call(1))
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 202})
		}, nil, "cut the legacy transport's session stream"},
		{"one sent as the stream closed to a server that then exits is the cut's too", func(b *tb) {
			// server-everything 0.6.2 under get-stream-dropped, in CI: it
			// exits when its session's stream closes, 9 ms after the probe
			// POSTed a call to the session, which it never answered (no
			// status either).
			b.add(wire.Event{Type: wire.EventProcessStarted, PID: 7})
			b.legacyStream(1, "/message?sessionId=a")
			b.at(5).cut(1, wire.CutBoth)
			b.at(6).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "POST /message?sessionId=a"})
			b.at(7).body(2, call(1))
			code := 0
			b.at(15).add(wire.Event{Type: wire.EventProcessExited, PID: 7, ExitCode: &code})
		}, nil, "cut the legacy transport's session stream"},
		{"one sent to another session is owed as any", func(b *tb) {
			b.legacyStream(1, "/message?sessionId=a")
			b.at(5).cut(1, wire.CutBoth)
			b.legacyStream(2, "/message?sessionId=b")
			b.at(500).legacyPost(3, "/message?sessionId=b", call(1), 202)
		}, []string{reports.RuleUnanswered}, ""},
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
			notes := strings.Join(v.Notes, "\n")
			if tc.note != "" && !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q; want one that says %q", notes, tc.note)
			}
			if tc.note == "" && strings.Contains(notes, "at both ends") {
				t.Errorf("notes %q excuse a call the cut did not touch", notes)
			}
		})
	}
}
