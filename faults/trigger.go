package faults

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

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
	{Name: "inflight", Type: TypeInt, Doc: "fire only while at least this many requests (either direction) are unanswered; at most 2048 (a plan keeps 1024 a direction)"},
	{Name: "position", Type: TypeChoice, Choices: []string{"before", "after"}, Doc: "fire before or after the triggering message is forwarded (default depends on the fault)"},
	{Name: "tool", Type: TypeString, Doc: "fire only on tools/call requests whose params.name matches this glob (* matches any run), and on their answers"},
	{Name: "id", Type: TypeString, Doc: `fire only on messages with this id, requests and answers alike: id=3 is the number 3, id="3" and id=abc are strings (a value that is not a JSON number is a string); numbers are compared as written`},
	{Name: "from", Type: TypeDuration, Doc: "fire only on messages received at least this long after the session started"},
	{Name: "until", Type: TypeDuration, Doc: "fire only on messages received less than this long after the session started (must be later than from)"},
	{Name: "session", Type: TypeInt, Doc: "in a scenario with several sessions (workload sessions, --sessions), act in session K alone (1 is the first); without it a fault acts in every session, each counting its own messages"},
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
	// Tool is a glob over the tool name of tools/call requests and their
	// answers; "" is no condition.
	Tool string
	// ID is the JSON text of the id to match (`3`, `"abc"`); "" is no condition.
	ID string
	// From and Until bound when, since the session started, a message may
	// be received to count; Until 0 is no bound.
	From, Until time.Duration
	// Session is the one session of a several-session scenario the fault
	// acts in (1 is the first); 0 is every session.
	Session int
}

func newTrigger(v Values, defaultPhase Phase) (Trigger, error) {
	t := Trigger{On: v.Pattern("on"), Nth: v.Int("nth"), Every: v.Int("every"), InFlight: v.Int("inflight"), Phase: defaultPhase}
	if v.Has("after") {
		a := v.Pattern("after")
		t.After = &a
	}
	if t.InFlight > 2*maxOpen {
		return t, fmt.Errorf("inflight: %d is more than the %d unanswered requests a plan keeps (%d a direction), so the fault could never fire", t.InFlight, 2*maxOpen, maxOpen)
	}
	if v.Has("p") {
		t.P, t.HasP = v.Float("p"), true
	}
	if v.Has("position") && v.String("position") == "after" {
		t.Phase = After
	} else if v.Has("position") {
		t.Phase = Before
	}
	if v.Has("tool") {
		t.Tool = v.String("tool")
	}
	if v.Has("id") {
		id, err := idText(v.String("id"))
		if err != nil {
			return t, fmt.Errorf("id: %v", err)
		}
		t.ID = id
	}
	t.From, t.Until = v.Duration("from"), v.Duration("until")
	if v.Has("until") && t.Until <= t.From {
		return t, fmt.Errorf("until: %s is not later than from=%s, so the fault could never fire", t.Until, t.From)
	}
	if v.Has("session") {
		if t.Session = v.Int("session"); t.Session < 1 || t.Session > MaxSessions {
			return t, fmt.Errorf("session: %d is not a session of a scenario (1 to %d; 1 is the first)", t.Session, MaxSessions)
		}
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

// idText turns the value of id= into the JSON text a message's id is
// compared with: a JSON number stays as written, a quoted JSON string is
// written canonically, and any other text is that string.
func idText(v string) (string, error) {
	if strings.HasPrefix(v, `"`) {
		var s string
		if err := json.Unmarshal([]byte(v), &s); err != nil {
			return "", fmt.Errorf("%s is not a JSON string; write id=\"abc\" or id=abc", v)
		}
		return canonicalString(s), nil
	}
	if isJSONNumber(v) {
		return v, nil
	}
	return canonicalString(v), nil
}

// canonicalString is s as JSON text, escaped the way encoding/json does.
func canonicalString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a peer's "a<b" is not written "a\u003cb"
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func isJSONNumber(v string) bool {
	return v != "" && (v[0] == '-' || '0' <= v[0] && v[0] <= '9') && json.Valid([]byte(v))
}

// idMatches reports whether a message's id (its JSON text as the peer wrote
// it) is want. A string id written with escapes is compared canonically.
func idMatches(want, got string) bool {
	if got == want {
		return true
	}
	if !strings.HasPrefix(got, `"`) || !strings.Contains(got, `\`) {
		return false
	}
	var s string
	if json.Unmarshal([]byte(got), &s) != nil {
		return false
	}
	return canonicalString(s) == want
}

// inWindow reports whether a message received at (since the session
// started) is inside the from/until window.
func (t *Trigger) inWindow(at time.Duration) bool {
	return at >= t.From && (t.Until == 0 || at < t.Until)
}

// toolName is params.name of a tools/call request, "" when it has none. It
// decodes the frame, so the plan calls it only when a trigger uses tool=.
func toolName(raw []byte) string {
	var req struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &req) != nil {
		return ""
	}
	return req.Params.Name
}
