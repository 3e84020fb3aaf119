package faults

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// toolCall is a tools/call request for the tool name (JSON-quoted here).
func toolCall(f frame, name string) frame {
	f.raw = strings.Replace(f.raw, `"params":{}`, `"params":{"name":`+strconv.Quote(name)+`,"arguments":{}}`, 1)
	return f
}

// TestTriggerTool covers tool=GLOB: tools/call requests whose params.name
// matches, and the answers to them, whichever way they travel.
func TestTriggerTool(t *testing.T) {
	frames := []frame{
		toolCall(request(c2s, "1", "tools/call", ""), "echo"), // 1
		toolCall(request(c2s, "2", "tools/call", ""), "slow"), // 2
		response(s2c, "2"),                  // 3: answers slow
		response(s2c, "1"),                  // 4: answers echo
		request(c2s, "3", "tools/list", ""), // 5: not a call
		response(s2c, "3"),                  // 6
		toolCall(request(c2s, "4", "tools/call", ""), "echo_upper"), // 7
		errorAnswer(s2c, "4"), // 8: an error answers too
		toolCall(request(c2s, "5", "tools/call", ""), "db/query"), // 9
		progress(s2c, "5"),                                    // 10: a notification is no answer
		response(s2c, "5"),                                    // 11
		request(c2s, "6", "tools/call", ""),                   // 12: a call without a name
		response(s2c, "6"),                                    // 13
		toolCall(request(s2c, "7", "tools/call", ""), "echo"), // 14: a call the other way
		response(c2s, "7"),                                    // 15
		response(s2c, "1"),                                    // 16: answered twice: the request is gone
	}
	tests := []struct {
		name string
		spec string
		want []int
	}{
		{"an exact name: the call and its answer", "eof:tool=echo,times=0", []int{1, 4, 14, 15}},
		{"a glob", "eof:tool=echo*,times=0", []int{1, 4, 7, 8, 14, 15}},
		{"a star matches slashes", "eof:tool=*query,times=0", []int{9, 11}},
		{"* matches every named call", "eof:tool=*,times=0", []int{1, 2, 3, 4, 7, 8, 9, 11, 14, 15}},
		{"with on= for the answers only", "eof:tool=slow,on=s2c:response,times=0", []int{3}},
		{"with on= for the requests only", "eof:tool=echo,on=c2s:request,times=0", []int{1}},
		{"no match never fires", "eof:tool=nope,times=0", []int{}},
		{"nth counts only tool matches", "eof:tool=echo*,nth=3", []int{7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := runPlan(t, 1, []string{tc.spec}, frames)
			if diff := cmp.Diff(tc.want, firedAt(ds, "eof#1")); diff != "" {
				t.Errorf("%s fired at (-want +got):\n%s", tc.spec, diff)
			}
		})
	}
}

// TestTriggerToolIsReadOnlyWhenUsed: without tool=, the plan does not decode
// frames for tool names.
func TestTriggerToolIsReadOnlyWhenUsed(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want string
	}{
		{"eof", ""},
		{"eof:tool=*", "echo"},
	} {
		p := NewPlan(1, mustParse(t, tc.spec))
		m := classify(t, toolCall(request(c2s, "1", "tools/call", ""), "echo"))
		if got := p.Receive(c2s, &m).Tool; got != tc.want {
			t.Errorf("%s: step tool %q; want %q", tc.spec, got, tc.want)
		}
	}
}

// TestTriggerID covers id=: numbers as written, strings quoted or bare,
// requests and answers in either direction.
func TestTriggerID(t *testing.T) {
	frames := []frame{
		request(c2s, "3", "ping", ""),           // 1
		response(s2c, "3"),                      // 2
		request(c2s, `"3"`, "ping", ""),         // 3: the string "3"
		response(s2c, `"3"`),                    // 4
		request(s2c, "3", "roots/list", ""),     // 5: the server's own 3
		response(c2s, "3"),                      // 6
		request(c2s, `"abc"`, "ping", ""),       // 7
		errorAnswer(s2c, `"abc"`),               // 8
		request(c2s, `"a\u0062c"`, "ping", ""),  // 9: "abc" written with an escape
		request(c2s, `"a<b"`, "ping", ""),       // 10
		request(c2s, "3.0", "ping", ""),         // 11: not written as 3
		notif(c2s, "notifications/initialized"), // 12: no id
		garbage(c2s),                            // 13
	}
	tests := []struct {
		name string
		spec string
		want []int
	}{
		{"a number", "eof:id=3,times=0", []int{1, 2, 5, 6}},
		{"a quoted string", `eof:id="3",times=0`, []int{3, 4}},
		{"a bare string", "eof:id=abc,times=0", []int{7, 8, 9}},
		{"a quoted string with an escape", `eof:id="\u0061bc",times=0`, []int{7, 8, 9}},
		{"HTML characters are not escaped", "eof:id=a<b,times=0", []int{10}},
		{"numbers as written", "eof:id=3.0,times=0", []int{11}},
		{"with on=", "eof:id=3,on=s2c,times=0", []int{2, 5}},
		{"no match", "eof:id=99,times=0", []int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := runPlan(t, 1, []string{tc.spec}, frames)
			if diff := cmp.Diff(tc.want, firedAt(ds, "eof#1")); diff != "" {
				t.Errorf("%s fired at (-want +got):\n%s", tc.spec, diff)
			}
		})
	}
}

func TestIDText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"3", "3"},
		{"-1.5e3", "-1.5e3"},
		{`"3"`, `"3"`},
		{"abc", `"abc"`},
		{`"abc"`, `"abc"`},
		{"true", `"true"`},
		{"null", `"null"`},
		{"a<b", `"a<b"`},
		{`"\u0061"`, `"a"`},
		{"01", `"01"`}, // not a JSON number
	}
	for _, tc := range tests {
		got, err := idText(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("idText(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := idText(`"abc`); err == nil {
		t.Error(`idText("abc) accepted an unterminated string`)
	}
}

// fakeClock is a session clock a test moves by hand.
type fakeClock struct{ now time.Duration }

func (c *fakeClock) read() time.Duration { return c.now }

// TestTriggerWindow covers from= and until=: a message counts only when it
// is received inside the window, measured on the injected clock.
func TestTriggerWindow(t *testing.T) {
	// One ping a second: message i arrives at (i-1) seconds.
	frames := repeat(notif(c2s, "notifications/message"), 10)
	tests := []struct {
		name string
		spec string
		want []int
	}{
		{"from", "eof:from=3s,times=0", []int{4, 5, 6, 7, 8, 9, 10}},
		{"until excludes its own moment", "eof:until=3s,times=0", []int{1, 2, 3}},
		{"from and until", "eof:from=2s,until=5s,times=0", []int{3, 4, 5}},
		{"from with the default times", "eof:from=2500ms", []int{4}},
		{"nth counts only inside the window", "eof:from=2s,nth=2", []int{4}},
		{"every counts only inside the window", "eof:from=1s,every=3", []int{4, 7, 10}},
		{"a window after the traffic", "eof:from=1h,times=0", []int{}},
		{"from=0s is no bound", "eof:from=0s,times=0", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{}
			p := NewPlan(1, mustParse(t, tc.spec), WithClock(clock.read))
			got := []int{}
			for i, f := range frames {
				clock.now = time.Duration(i) * time.Second
				m := classify(t, f)
				s := p.Receive(f.dir, &m)
				clock.now += 500 * time.Millisecond // Decide does not read the clock again
				for _, phase := range []Phase{Before, After} {
					if len(p.Decide(phase, s)) > 0 {
						got = append(got, i+1)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s fired at (-want +got):\n%s", tc.spec, diff)
			}
		})
	}
}

// TestTriggerWindowDrawsStaySeeded: a message's draw depends on the seed,
// the fault and the message's ordinal, not on the clock, so the messages
// inside a window get the same decisions whether or not the ones before it
// were outside.
func TestTriggerWindowDrawsStaySeeded(t *testing.T) {
	frames := pingPong(50)
	spec := "drop:p=0.3,times=0,from=10s"
	run := func(outside int) []int {
		clock := &fakeClock{}
		p := NewPlan(9, mustParse(t, spec), WithClock(clock.read))
		got := []int{}
		for i, f := range frames {
			clock.now = 10 * time.Second
			if i < outside {
				clock.now = 0
			}
			m := classify(t, f)
			if len(p.Decide(Before, p.Receive(f.dir, &m))) > 0 {
				got = append(got, i+1)
			}
		}
		return got
	}
	all, late := run(0), run(50)
	var want []int
	for _, at := range all {
		if at > 50 {
			want = append(want, at)
		}
	}
	if len(want) == 0 || len(want) == len(all) {
		t.Fatalf("p=0.3 fired at %v: the test needs firings on both halves", all)
	}
	if diff := cmp.Diff(want, late); diff != "" {
		t.Errorf("decisions inside the window (-all inside +half outside):\n%s", diff)
	}
}

// TestSetClock: the relay hands the plan its recorder's clock after the plan
// was made.
func TestSetClock(t *testing.T) {
	p := NewPlan(1, mustParse(t, "eof:from=10s,times=0"))
	m := classify(t, notif(c2s, "notifications/message"))
	if fs := p.Decide(After, p.Receive(c2s, &m)); len(fs) != 0 {
		t.Fatal("fired before from= with the default clock")
	}
	p.SetClock(func() time.Duration { return 11 * time.Second })
	if fs := p.Decide(After, p.Receive(c2s, &m)); len(fs) != 1 {
		t.Errorf("did not fire at 11s on the clock set by SetClock")
	}
}

func TestTriggerKeyErrors(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"eof:from=2s,until=1s", "until: 1s is not later than from=2s"},
		{"eof:until=0s", "until: 0s is not later than from=0s"},
		{"eof:inflight=2049", "inflight: 2049 is more than the 2048 unanswered requests a plan keeps"},
		{"eof:from=soon", `from: "soon" is not a duration`},
		{`eof:id="abc`, `id: "abc is not a JSON string`},
		{"eof:tool=", "tool: empty value"},
		{"eof:id=", "id: empty value"},
	}
	for _, tc := range tests {
		_, err := Parse(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

// TestComposition pins how stacked faults compose (see the package doc):
// every fault whose trigger matches fires, in plan order within each phase,
// and one fault's effect does not hide the message from the next one's
// trigger. The relay then applies the effects in that order: the first drop
// or replace wins and copies add up (chaos tests check the applying).
func TestComposition(t *testing.T) {
	specs := []string{
		"duplicate:on=s2c:response",
		"corrupt:on=s2c:response,mode=text",
		"drop:on=s2c:response",
		"duplicate:on=s2c:response,count=3",
		"eof:on=s2c:response",
	}
	ds := runPlan(t, 1, specs, []frame{request(c2s, "1", "ping", ""), response(s2c, "1")})
	type fired struct {
		Phase   Phase
		Label   string
		Copies  int
		Drop    bool
		Replace bool
	}
	var got []fired
	for _, d := range ds {
		got = append(got, fired{d.Phase, d.Label, d.Effect.Copies, d.Effect.Drop, d.Effect.Replace != nil})
	}
	want := []fired{
		{Before, "duplicate#1", 1, false, false},
		{Before, "corrupt#1", 0, false, true},
		{Before, "drop#1", 0, true, false},
		{Before, "duplicate#2", 2, false, false},
		{After, "eof#1", 0, false, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("firings (-want +got):\n%s", diff)
	}
}
