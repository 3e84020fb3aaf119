package judge

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// A deadline counts the CPU time the peer could have had: at a third of a
// core from 1s on, a 5s deadline of a request sent at 0 ends at 1 + 4*3 =
// 13s; a stall stops it, and a share back at a whole core runs it at wall
// speed again.
func TestDeadlineRunsAtTheShareOfACore(t *testing.T) {
	const s = 1_000_000
	for _, tc := range []struct {
		name   string
		st     stalls
		from   int64
		want   int64
		wantFv bool
	}{
		{"no share", stalls{}, 0, 5 * s, false},
		{"a third from 1s", stalls{shares: []shareFrom{{1 * s, 1.0 / 3}}}, 0, 13 * s, false},
		{"a third, then whole again at 4s", stalls{shares: []shareFrom{{1 * s, 1.0 / 3}, {4 * s, 1}}}, 0, 7 * s, false},
		{"a half, with a stall from 2s to 3s", stalls{w: []window{{2 * s, 3 * s}}, shares: []shareFrom{{0, 0.5}}}, 0, 11 * s, false},
		{"a stall that never lifts", stalls{w: []window{{2 * s, never}}, shares: []shareFrom{{0, 0.5}}}, 0, never, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, forever := tc.st.deadline(tc.from, 5*s, 100*s)
			if d != tc.want || forever != tc.wantFv {
				t.Errorf("deadline = %d, %v; want %d, %v", d, forever, tc.want, tc.wantFv)
			}
		})
	}
}

// Issue 31: a server slowed by its neighbours on a busy machine. Its stdin
// closes with a call in flight 0.8s in, and the ladder, counting the CPU it
// could have had, signals it at 8.7s: on the wall clock the call was older
// than the 5s deadline, but at a third of a core it was not, so it was lost
// at shutdown, not hung. Without the cpu-share event the same record is a
// hang.
func TestJudgeCountsDeadlinesAtTheRecordedShare(t *testing.T) {
	rules := func(shared bool) []string {
		b := newTB()
		if shared {
			b.add(wire.Event{Type: wire.EventCPUShare, CPUShare: 333})
		}
		b.at(800).call("2", "tools/call")
		b.at(810).eofFault()
		b.at(8700).signal("SIGTERM", "the server did not exit within 3s of its stdin closing")
		b.at(8800).stdoutEOF()
		b.killed("SIGTERM", true)
		b.at(8900).end("the server exited")
		return rulesOf(Session(b.evs))
	}
	if diff := cmp.Diff([]string{reports.RuleShutdownSIGTERM}, rules(true)); diff != "" {
		t.Errorf("with the share recorded (-want +got):\n%s", diff)
	}
	if got := rules(false); !slices.Contains(got, reports.RuleUnanswered) {
		t.Errorf("without it: %v, want a hang beside the zombie", got)
	}
}
