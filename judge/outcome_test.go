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
