package faults

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pingPong is n client pings, each answered by the server at once: pings are
// the odd positions 1, 3, 5, ... and their responses the even ones.
func pingPong(n int) []frame {
	var out []frame
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i)
		out = append(out, request(c2s, id, "ping", ""), response(s2c, id))
	}
	return out
}

// TestTriggerOccurrences covers on, nth, every, times and after over a fixed
// conversation of eight ping round trips.
func TestTriggerOccurrences(t *testing.T) {
	frames := pingPong(8)
	tests := []struct {
		name string
		spec string
		want []int // positions the fault fires on
	}{
		{"default fires once on the first message", "eof", []int{1}},
		{"default fires once on the first match", "eof:on=s2c:response", []int{2}},
		{"a request pattern", "stall:on=c2s:request:ping", []int{1}},
		{"no match never fires", "eof:on=c2s:request:tools/call", []int{}},
		{"a method pattern also matches the answers", "eof:on=ping,times=0", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},

		{"nth=1 is the first", "eof:on=c2s:request:ping,nth=1", []int{1}},
		{"nth=3 fires only on the 3rd match", "eof:on=c2s:request:ping,nth=3", []int{5}},
		{"nth=3 with times=0 still fires once", "stall:on=c2s:request:ping,nth=3,times=0", []int{5}},
		{"nth beyond the matches never fires", "eof:on=c2s:request:ping,nth=9", []int{}},
		{"nth counts matches, not messages", "eof:on=s2c:response,nth=2", []int{4}},

		{"every=1 is every match", "eof:on=c2s:request:ping,every=1", []int{1, 3, 5, 7, 9, 11, 13, 15}},
		{"every=2 fires on the 2nd, 4th, ...", "eof:on=c2s:request:ping,every=2", []int{3, 7, 11, 15}},
		{"every=3", "stall:on=c2s:request:ping,every=3", []int{5, 11}},
		{"every with times caps", "eof:on=c2s:request:ping,every=2,times=2", []int{3, 7}},
		{"every with times=0 has no limit", "eof:on=c2s:request:ping,every=4,times=0", []int{7, 15}},

		{"times=3 fires on the first three matches", "eof:on=c2s:request:ping,times=3", []int{1, 3, 5}},
		{"times=0 without every has no limit", "eof:on=s2c:response,times=0", []int{2, 4, 6, 8, 10, 12, 14, 16}},
		{"times above the matches", "eof:on=c2s:request:ping,times=100", []int{1, 3, 5, 7, 9, 11, 13, 15}},

		{"after excludes the arming message", "eof:on=c2s:request:ping,after=c2s:request:ping,times=0", []int{3, 5, 7, 9, 11, 13, 15}},
		{"after arms on another message", "eof:on=c2s:request:ping,after=s2c:response,times=0", []int{3, 5, 7, 9, 11, 13, 15}},
		{"after with the default on fires on the next message", "stall:after=c2s:request:ping", []int{2}},
		{"after arms once", "eof:on=s2c:response,after=s2c:response,times=0", []int{4, 6, 8, 10, 12, 14, 16}},
		{"after that never matches never fires", "eof:after=tools/call,times=0", []int{}},
		{"after matches answers by their request's method", "eof:on=c2s,after=s2c:response:ping", []int{3}},
		{"nth counts only after arming", "eof:on=c2s:request:ping,after=s2c:response,nth=2", []int{5}},
		{"every counts only after arming", "stall:on=s2c:response,after=s2c:response,every=2,times=0", []int{6, 10, 14}},
		{"after=* arms on the first message", "eof:after=*,times=2", []int{2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := runPlan(t, 1, []string{tc.spec}, frames)
			label := mustParse(t, tc.spec)[0].Family.Name + "#1"
			if diff := cmp.Diff(tc.want, firedAt(ds, label)); diff != "" {
				t.Errorf("%s fired at (-want +got):\n%s", tc.spec, diff)
			}
		})
	}
}

// TestTriggerInFlight covers inflight=K: requests open when received and close
// when an answer travelling the other way is received, so the count a message
// sees includes itself when it is a request and excludes the request it
// answers.
func TestTriggerInFlight(t *testing.T) {
	frames := []frame{
		request(c2s, "1", "tools/call", ""),             // 1: open 1
		request(c2s, "2", "tools/call", ""),             // 2: open 2
		notif(s2c, "notifications/message"),             // 3: open 2
		response(s2c, "1"),                              // 4: open 1
		request(c2s, "3", "tools/call", ""),             // 5: open 2
		response(c2s, "2"),                              // 6: same direction as request 2, closes nothing: open 2
		request(s2c, "9", "sampling/createMessage", ""), // 7: the server's request counts too: open 3
		response(c2s, "9"),                              // 8: open 2
		response(s2c, "2"),                              // 9: open 1
		errorAnswer(s2c, "3"),                           // 10: an error closes too: open 0
		notif(c2s, "notifications/cancelled"),           // 11: open 0
		response(s2c, "1"),                              // 12: already answered: open 0
		request(c2s, "4", "tools/call", ""),             // 13: open 1
		request(c2s, "4", "tools/call", ""),             // 14: same id again replaces it: open 1
		errorAnswer(s2c, "null"),                        // 15: null id closes nothing: open 1
		request(s2c, "4", "roots/list", ""),             // 16: same id, other direction: open 2
		response(c2s, "4"),                              // 17: closes the server's 4: open 1
		response(s2c, "4"),                              // 18: closes the client's 4: open 0
		request(c2s, `"4"`, "tools/call", ""),           // 19: a string id: open 1
		request(c2s, "4", "tools/call", ""),             // 20: differs from "4": open 2
		response(s2c, `"4"`),                            // 21: open 1
		request(c2s, "5", "tools/call", ""),             // 22: open 2
		request(s2c, "6", "elicitation/create", ""),     // 23: open 3
		notif(s2c, "notifications/tools/list_changed"),  // 24: open 3
		progress(s2c, "1"),                              // 25: open 3
		response(c2s, "6"),                              // 26: open 2
		response(s2c, "5"),                              // 27: open 1
		response(s2c, "4"),                              // 28: open 0
		request(c2s, "7", "ping", ""),                   // 29: open 1
		garbage(c2s),                                    // 30: open 1
	}
	tests := []struct {
		name string
		spec string
		want []int
	}{
		{"inflight=1", "eof:inflight=1,times=0", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23, 24, 25, 26, 27, 29, 30}},
		{"inflight=2", "eof:inflight=2,times=0", []int{2, 3, 5, 6, 7, 8, 16, 20, 22, 23, 24, 25, 26}},
		{"inflight=3", "stall:inflight=3,times=0", []int{7, 23, 24, 25}},
		{"inflight=4", "eof:inflight=4,times=0", []int{}},
		{"inflight=0 is no condition", "eof:inflight=0,times=0", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30}},
		{"inflight with the default times", "eof:inflight=2", []int{2}},
		{"inflight with a pattern", "eof:on=c2s:request:tools/call,inflight=2,times=0", []int{2, 5, 20, 22}},
		{"the eof example", "eof:on=c2s:request:tools/call,inflight=3", []int{}},
		{"inflight on answers", "eof:on=s2c:response,inflight=1,times=0", []int{4, 9, 21, 27}},
		{"nth counts only messages that meet inflight", "eof:inflight=2,nth=2", []int{3}},
		{"every counts only messages that meet inflight", "eof:inflight=3,every=2", []int{23, 25}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := runPlan(t, 1, []string{tc.spec}, frames)
			label := mustParse(t, tc.spec)[0].Family.Name + "#1"
			if diff := cmp.Diff(tc.want, firedAt(ds, label)); diff != "" {
				t.Errorf("%s fired at (-want +got):\n%s", tc.spec, diff)
			}
		})
	}
}

// TestTriggerInFlightExample is the eof family's example: three concurrent
// tools/call requests, the early EOF lands after the third is forwarded.
func TestTriggerInFlightExample(t *testing.T) {
	frames := []frame{
		request(c2s, "0", "initialize", ""),
		response(s2c, "0"),
		notif(c2s, "notifications/initialized"),
		request(c2s, "1", "tools/call", ""),
		request(c2s, "2", "tools/call", ""),
		response(s2c, "1"),
		request(c2s, "3", "tools/call", ""),
		request(c2s, "4", "tools/call", ""),
		request(c2s, "5", "tools/call", ""),
	}
	got := runPlan(t, 1, []string{eofFamily.Example}, frames)
	want := []decision{{At: 8, Phase: After, Label: "eof#1", Spec: eofFamily.Example,
		Effect: Effect{CloseServerInput: true, Detail: "close the server's stdin"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

func TestTriggerProbability(t *testing.T) {
	frames := pingPong(100)
	all := make([]int, len(frames))
	for i := range all {
		all[i] = i + 1
	}
	tests := []struct {
		name string
		spec string
		want []int
	}{
		{"p=0 never fires", "eof:p=0,times=0", []int{}},
		{"p=0 never fires even on every", "stall:p=0,every=1", []int{}},
		{"p=1 always fires", "eof:p=1,times=0", all},
		{"p=1 always fires on every", "stall:p=1,every=1", all},
		{"p=1 with the default times fires once", "eof:p=1", []int{1}},
		{"p=1 with nth", "eof:p=1,nth=4", []int{4}},
		{"p=1 with every", "eof:p=1,every=50", []int{50, 100, 150, 200}},
		{"p=1 with on", "burst:p=1,on=s2c:response,method=notifications/message,count=1,times=3", []int{2, 4, 6}},
	}
	for _, seed := range []uint64{0, 1, 42, 1 << 63} {
		for _, tc := range tests {
			t.Run(tc.name+"/seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
				ds := runPlan(t, seed, []string{tc.spec}, frames)
				label := mustParse(t, tc.spec)[0].Family.Name + "#1"
				if diff := cmp.Diff(tc.want, firedAt(ds, label)); diff != "" {
					t.Errorf("%s fired at (-want +got):\n%s", tc.spec, diff)
				}
			})
		}
	}
}

// TestTriggerPDrawsAfterOccurrence pins the order of the rules: nth, every and
// times pick the candidate, then p decides whether it fires. A candidate whose
// draw fails is not retried on the next match, so nth=N with p<1 fires on the
// Nth match or never.
func TestTriggerPDrawsAfterOccurrence(t *testing.T) {
	frames := pingPong(50)
	for seed := range uint64(40) {
		ds := runPlan(t, seed, []string{"eof:on=c2s:request,nth=3,p=0.5"}, frames)
		got := firedAt(ds, "eof#1")
		if len(got) > 1 || (len(got) == 1 && got[0] != 5) {
			t.Errorf("seed %d: nth=3,p=0.5 fired at %v; want [5] or nothing", seed, got)
		}
	}
}

// TestTriggerPhase checks which phase each family fires in by default and that
// position= moves it.
func TestTriggerPhase(t *testing.T) {
	tests := []struct {
		spec string
		want Phase
	}{
		{"stall", Before},
		{"stall:position=before", Before},
		{"stall:position=after", After},
		{"burst:method=notifications/message", Before},
		{"burst:method=notifications/message,position=after", After},
		{"eof", After},
		{"eof:position=before", Before},
		{"eof:position=after", After},
		{"half-close", After},
		{"half-close:position=before", Before},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			got := runPlan(t, 1, []string{tc.spec}, []frame{notif(s2c, "notifications/message"), notif(s2c, "notifications/message")})
			if len(got) != 1 {
				t.Fatalf("decisions = %v; want exactly one", got)
			}
			if got[0].At != 1 || got[0].Phase != tc.want {
				t.Errorf("fired as %v; want on #1 in phase %v", got[0], tc.want)
			}
		})
	}
}

// TestDecideOtherPhaseDoesNotCount: asking for the phase a fault is not in,
// however often, must not count the message as a match, or nth would depend
// on how the relay calls Decide.
func TestDecideOtherPhaseDoesNotCount(t *testing.T) {
	tests := []struct {
		spec  string
		phase Phase // the fault's phase; the other one is asked three times per message
		want  []int
	}{
		{"eof:nth=2", After, []int{2}},
		{"stall:nth=2", Before, []int{2}},
		{"stall:every=2,position=after", After, []int{2, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			other := Before
			if tc.phase == Before {
				other = After
			}
			p := NewPlan(1, mustParse(t, tc.spec))
			got := []int{}
			for i := 1; i <= 4; i++ {
				m := classify(t, notif(s2c, "notifications/message"))
				s := p.Receive(s2c, &m)
				for range 3 {
					if fs := p.Decide(other, s); len(fs) != 0 {
						t.Errorf("message %d: %s fired in %v", i, fs[0].Label, other)
					}
				}
				if fs := p.Decide(tc.phase, s); len(fs) != 0 {
					got = append(got, i)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fired at (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanOrderAndLabels: faults firing on one message come out in plan order
// within each phase, labelled by family and position among that family.
func TestPlanOrderAndLabels(t *testing.T) {
	specs := []string{
		"stall:for=1s",
		"half-close",
		"burst:method=notifications/message,count=1",
		"stall:dir=c2s",
		"eof:position=before",
		"eof",
		"stall:on=c2s", // does not match
		"stall:position=after",
	}
	got := runPlan(t, 1, specs, []frame{notif(s2c, "notifications/message")})
	type fired struct {
		Phase Phase
		Label string
		Spec  string
	}
	var gotFired []fired
	for _, d := range got {
		gotFired = append(gotFired, fired{d.Phase, d.Label, d.Spec})
	}
	want := []fired{
		{Before, "stall#1", "stall:for=1s"},
		{Before, "burst#1", "burst:method=notifications/message,count=1"},
		{Before, "stall#2", "stall:dir=c2s"},
		{Before, "eof#1", "eof:position=before"},
		{After, "half-close#1", "half-close"},
		{After, "eof#2", "eof"},
		{After, "stall#4", "stall:position=after"},
	}
	if diff := cmp.Diff(want, gotFired); diff != "" {
		t.Errorf("firings (-want +got):\n%s", diff)
	}
}

func TestPlanAccessors(t *testing.T) {
	fs := mustParse(t, "eof", "stall")
	p := NewPlan(7, fs)
	if p.Seed() != 7 {
		t.Errorf("Seed() = %d; want 7", p.Seed())
	}
	if p.Empty() {
		t.Error("Empty() = true for a plan with faults")
	}
	if diff := cmp.Diff(fs, p.Faults(), cmp.Comparer(func(a, b *Fault) bool { return a == b })); diff != "" {
		t.Errorf("Faults() (-want +got):\n%s", diff)
	}
	empty := NewPlan(7, nil)
	if !empty.Empty() {
		t.Error("Empty() = false for a plan without faults")
	}
	m := classify(t, request(c2s, "1", "ping", ""))
	if got := empty.Decide(Before, empty.Receive(c2s, &m)); len(got) != 0 {
		t.Errorf("an empty plan decided %v", got)
	}
}
