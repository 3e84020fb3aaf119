package reports

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/wire"
)

// A session whose faults never fired could not fail: the judge says so, so
// that mcpchaos judge on a stored transcript agrees with the live run.
func TestJudgeNoFaultFired(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  string // the detail of a fault event, "" for none
		unjudg bool
	}{
		{"no fault event", "", true},
		{"only a skipped firing", "skipped: no progress token to use", true},
		{"a firing", "close the server's stdin", false},
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
			v := JudgeSession(b.evs)
			got := len(v.Indeterminate) == 1 && v.Indeterminate[0] == "no fault fired: the moment this scenario waits for never came (eof:on=s2c:request)"
			if got != tc.unjudg || !tc.unjudg && len(v.Indeterminate) > 0 {
				t.Errorf("indeterminate %q, want the no-fault-fired note: %v", v.Indeterminate, tc.unjudg)
			}
		})
	}
}
