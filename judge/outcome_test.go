package judge

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpchaos/mcpchaos/wire"
)

// A session whose faults never fired could not fail: the judge says so, so
// that mcpchaos judge on a stored transcript agrees with the live run.
func TestJudgeNoFaultFired(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault string // the detail of a fault event, "" for none
		want  string // the one indeterminate reason, "" for none
	}{
		{"no fault event", "", "no fault fired: the moment this scenario waits for never came (eof:on=s2c:request)"},
		{"only a skipped firing", "skipped: no progress token to use", "no fault fired: eof#1 skipped: no progress token to use"},
		{"a firing", "close the server's stdin", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTB()
			b.evs[0].Faults = []string{"eof:on=s2c:request"}
			b.call("1", "tools/call")
			if tc.fault != "" {
				b.add(wire.Event{Type: wire.EventFault, Fault: "eof#1", Action: "eof", Detail: tc.fault})
			}
			b.at(10).reply("1")
			b.at(20).finish()
			v := Session(b.evs)
			var want []string
			if tc.want != "" {
				want = []string{tc.want}
			}
			if diff := cmp.Diff(want, v.Indeterminate, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("indeterminate (-want +got):\n%s", diff)
			}
		})
	}
}

// A fault that fired and never landed (its every firing was followed by a
// did-not-land event) tested nothing: indeterminate, never a pass. One
// that landed once, or a fault beside it that landed not, changes nothing
// of the others.
func TestJudgeFaultDidNotLand(t *testing.T) {
	const (
		spec     = "id-collision:on=c2s:request:tools/call"
		collide  = "send the request on with id 1 (was 2), the id of the tools/call request still in flight; the first answer with id 1 goes back as 1, the next as 2"
		missed   = "did not land: the tools/call request (id 1) whose id it took was answered before this request went on to the server"
		wantNote = "the fault fired but did not land: id-collision#1: the tools/call request (id 1) whose id it took was answered before this request went on to the server"
	)
	fault := func(detail string) wire.Event {
		return wire.Event{Type: wire.EventFault, Fault: "id-collision#1", Spec: spec, Action: "id-collision", Detail: detail}
	}
	for _, tc := range []struct {
		name   string
		events []wire.Event
		want   []string
	}{
		{"a firing that landed", []wire.Event{fault(collide)}, nil},
		{"a firing that did not land", []wire.Event{fault(collide), fault(missed)}, []string{wantNote}},
		{"a miss, then a firing that landed", []wire.Event{fault(collide), fault(missed), fault(collide)}, nil},
		{"two firings, both missed", []wire.Event{fault(collide), fault(missed), fault(collide), fault(missed)}, []string{wantNote}},
		{"a skipped firing, then one that did not land", []wire.Event{fault("skipped: no other request the client sent is in flight to collide with"), fault(collide), fault(missed)}, []string{wantNote}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTB()
			b.evs[0].Faults = []string{spec}
			b.call("1", "tools/call")
			for _, e := range tc.events {
				b.add(e)
			}
			b.at(10).reply("1")
			b.at(20).finish()
			v := Session(b.evs)
			if diff := cmp.Diff(tc.want, v.Indeterminate, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("indeterminate (-want +got):\n%s", diff)
			}
		})
	}
}
