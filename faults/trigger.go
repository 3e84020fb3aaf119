package faults

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

// triggerParams are the keys every fault accepts to say when it fires.
var triggerParams = []Param{
	{Name: "on", Type: TypePattern, Doc: "fire on messages matching [DIR:][KIND:][METHOD-GLOB], e.g. s2c:response:tools/call (default: any message, unless the fault names its own moment)"},
	{Name: "after", Type: TypePattern, Doc: "only consider messages after the first one matching this pattern"},
	{Name: "nth", Type: TypeInt, Doc: "fire on the Nth matching message only (1 is the first)"},
	{Name: "every", Type: TypeInt, Doc: "fire on every Nth matching message"},
	{Name: "times", Type: TypeInt, Doc: "fire at most this many times; 0 is no limit (default 1, or no limit when every is set)"},
	{Name: "p", Type: TypeFloat, Doc: "fire on a candidate message with this probability, drawn from the seed (0 is never)"},
	{Name: "inflight", Type: TypeInt, Doc: "fire only while at least this many requests (either direction) are unanswered"},
	{Name: "position", Type: TypeChoice, Choices: []string{"before", "after"}, Doc: "fire before or after the triggering message is forwarded (default depends on the fault)"},
}

// Trigger decides which messages a fault fires on.
type Trigger struct {
	On       Pattern
	After    *Pattern
	Nth      int
	Every    int
	Times    int // 0 is no limit
	P        float64
	HasP     bool
	InFlight int
	Phase    Phase
}

func newTrigger(v Values, defaultPhase Phase) (Trigger, error) {
	t := Trigger{On: v.Pattern("on"), Nth: v.Int("nth"), Every: v.Int("every"), InFlight: v.Int("inflight"), Phase: defaultPhase}
	if v.Has("after") {
		a := v.Pattern("after")
		t.After = &a
	}
	if v.Has("p") {
		t.P, t.HasP = v.Float("p"), true
	}
	if v.Has("position") && v.String("position") == "after" {
		t.Phase = After
	} else if v.Has("position") {
		t.Phase = Before
	}
	if v.Has("nth") && t.Nth == 0 {
		return t, fmt.Errorf("nth: counts from 1")
	}
	if v.Has("every") && t.Every == 0 {
		return t, fmt.Errorf("every: must be 1 or more")
	}
	if t.Nth > 0 && t.Every > 0 {
		return t, fmt.Errorf("nth and every cannot be combined: nth fires once on the Nth match, every fires on each Nth match")
	}
	switch {
	case v.Has("times"):
		t.Times = v.Int("times")
	case t.Every > 0:
		t.Times = 0
	default:
		t.Times = 1
	}
	return t, nil
}

// triggerState is a fault's progress through its trigger during one session.
type triggerState struct {
	armedAfter uint64 // global ordinal of the message that armed `after`; 0 not yet
	matches    int
	fired      int
}

// candidate applies the occurrence rules to a message that matched the
// pattern and the in-flight condition; the message is counted as a match.
func (t *Trigger) candidate(st *triggerState) bool {
	if t.Times > 0 && st.fired >= t.Times {
		return false
	}
	st.matches++
	switch {
	case t.Nth > 0:
		return st.matches == t.Nth
	case t.Every > 0:
		return st.matches%t.Every == 0
	}
	return true
}

// armedFor reports whether `after` allows the message with this global
// ordinal, arming it when this message is the first match.
func (t *Trigger) armedFor(st *triggerState, dir wire.Direction, m *wire.Message, method string, ordinal uint64) bool {
	if t.After == nil {
		return true
	}
	if st.armedAfter != 0 {
		return ordinal > st.armedAfter
	}
	if t.After.Matches(dir, m, method) {
		st.armedAfter = ordinal
	}
	return false
}
