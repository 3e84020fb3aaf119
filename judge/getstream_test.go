package judge

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// getOpen records the client opening its GET stream on exchange x.
func (b *tb) getOpen(x int64) {
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, HTTP: "GET /mcp", Standalone: true})
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: x, Status: 200, Detail: "response: text/event-stream"})
}

// getFault records a fault aimed at the GET stream: acting, or skipped
// for want of one.
func (b *tb) getFault(label, spec string, skipped bool) {
	detail := "inject notifications/tools/list_changed toward the client (on its GET stream, exchange 2)"
	if skipped {
		detail = "skipped: no GET stream is open toward the client (it opened none, or the one it had ended and was not reopened)"
	}
	b.add(wire.Event{Type: wire.EventFault, Fault: label, Spec: spec, Action: strings.Split(spec, ":")[0], Detail: detail})
}

// A client whose GET stream a fault cut, and which had not opened another
// when the server had a message for it a reconnection delay later, loses
// that message: a warning. One that reopened, or whose server asked it to
// wait longer (retry:), or that was given too little time, is not held to
// it; a client that never opened a GET stream (it MAY not) leaves the
// scenario nothing to test.
func TestGetStreamNotReopened(t *testing.T) {
	const (
		cut    = "eof:on=c2s:request:tools/call,stream=get"
		inject = "list-changed:on=s2c:response:tools/call,position=before,stream=get"
	)
	for _, tc := range []struct {
		name          string
		build         func(b *tb)
		want          []string
		indeterminate bool
	}{
		{"not reopened when the server had a message", func(b *tb) {
			b.getOpen(2)
			b.at(100).getFault("eof#1", cut, false)
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Fault: "eof#1", Cut: wire.CutBoth, Detail: "connection cut by fault eof#1; the server's side closed too"})
			b.at(3100).getFault("list-changed#3", inject, true)
		}, []string{reports.RuleGetStreamNotReopened}, false},
		{"reopened in time", func(b *tb) {
			b.getOpen(2)
			b.at(100).getFault("eof#1", cut, false)
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Fault: "eof#1", Cut: wire.CutBoth})
			b.at(1100).getOpen(5)
			b.at(3100).getFault("list-changed#3", inject, false)
		}, nil, false},
		{"too soon to hold it against the client", func(b *tb) {
			b.getOpen(2)
			b.at(100).getFault("eof#1", cut, false)
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Fault: "eof#1", Cut: wire.CutBoth})
			b.at(1500).getFault("list-changed#3", inject, true)
		}, nil, false},
		{"the server asked for a longer wait", func(b *tb) {
			b.getOpen(2)
			e := wire.Event{Type: wire.EventHTTP, Exchange: 2, EventID: "1", Detail: "an event without a message"}
			e.SetRaw([]byte("id: 1\nretry: 5000\ndata: \n\n"))
			b.add(e)
			b.at(100).getFault("eof#1", cut, false)
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Fault: "eof#1", Cut: wire.CutBoth})
			b.at(3100).getFault("list-changed#3", inject, true)
		}, nil, false},
		{"a cut of a POST's stream is not the GET stream's", func(b *tb) {
			b.getOpen(2)
			b.add(wire.Event{Type: wire.EventHTTP, Exchange: 3, HTTP: "POST /mcp"})
			b.at(100).add(wire.Event{Type: wire.EventHTTP, Exchange: 3, Fault: "eof#1", Cut: wire.CutBoth})
			b.at(3000).getFault("eof#1", cut, false)
			b.at(3100).getFault("list-changed#3", inject, true)
		}, nil, false},
		{"a client that opened no GET stream leaves nothing to test", func(b *tb) {
			b.at(100).getFault("eof#1", cut, true)
			b.at(3100).getFault("list-changed#3", inject, true)
		}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newClientTB("success")()
			tc.build(b)
			code := 0
			b.at(3200).add(wire.Event{Type: wire.EventProcessExited, Peer: "client", PID: 100, ExitCode: &code})
			b.at(3300).end("the client exited")
			v := Session(b.evs)
			var got []string
			for _, f := range v.Findings {
				got = append(got, f.Rule)
				if f.Severity != reports.SeverityWarning || !strings.Contains(f.Message, "cut by fault eof#1 at 100ms, and 3s later") {
					t.Errorf("finding %s %q", f.Severity, f.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s\nverdict %+v", diff, v)
			}
			if indet := strings.Contains(strings.Join(v.Indeterminate, "\n"), "no GET stream to act on"); indet != tc.indeterminate {
				t.Errorf("indeterminate %q; want it said: %v", v.Indeterminate, tc.indeterminate)
			}
		})
	}
}

// On the legacy transport the GET stream is the one every answer travels
// on: a scenario that cuts it to leave the calls answerable on streamable
// HTTP makes them impossible there, and a client that fails is right.
func TestLegacyStreamCutLetsTheClientFail(t *testing.T) {
	b := newClientTB("success")()
	b.legacyStream(2, "/message?sessionId=a")
	b.at(100).getFault("eof#1", "eof:on=c2s:request:tools/call,stream=get", false)
	b.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Fault: "eof#1", Cut: wire.CutBoth, Detail: "connection cut by fault eof#1; the server's side closed too"})
	code := 1
	b.at(200).add(wire.Event{Type: wire.EventProcessExited, Peer: "client", PID: 100, ExitCode: &code})
	b.at(300).end("the client exited")
	v := Session(b.evs)
	if len(v.Findings) != 0 {
		t.Errorf("findings %+v; want none: the cut made the calls impossible", v.Findings)
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "it may fail them") {
		t.Errorf("notes %q; want the relaxed expectation said", v.Notes)
	}
}
