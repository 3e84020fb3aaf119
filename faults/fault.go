package faults

import (
	"fmt"
	"sort"
	"strings"
)

// Action is what a fault does when its trigger fires. Implementations are
// one file each and must be deterministic given the FireContext.
type Action interface {
	Fire(c *FireContext) Effect
}

// Family is one kind of fault: its name, its documentation and its parameters.
type Family struct {
	Name   string
	Doc    string
	Params []Param
	// Phase is when the fault fires unless position= says otherwise.
	Phase Phase
	// On is the on= pattern used when the spec gives none; "" is any
	// message. A fault that only makes sense at one moment (mid-call,
	// before the handshake ends) says so here.
	On  string
	New func(v Values) (Action, error)
	// Example is a spec that shows the fault in use.
	Example string
	// HTTPOnly marks a fault that exists only on HTTP (a status, a reset
	// connection, a session DELETE); the stdio transports refuse it.
	HTTPOnly bool
	// DefaultOn, when set, gives the on= pattern a spec without one gets
	// (it may depend on the fault's other parameters, such as a mode).
	DefaultOn func(v Values) string
	// InFlight marks a fault whose action reads the requests in flight:
	// FireContext.Sent, the request an answer answers, the ids it rewrote.
	// A plan keeps that table only when a fault or a trigger needs it.
	InFlight bool
	// Local marks a fault whose every effect stays with the message that
	// fired it: it drops, delays, copies, replaces or cuts that message,
	// in that message's direction, and writes, stalls, closes or signals
	// nothing else. A relay may leave a direction that only local faults
	// can reach, and no trigger watches, unread (see Plan.Reaches).
	Local bool
}

// defaultOn is the on= pattern a spec without one gets: DefaultOn's when the
// moment depends on the other parameters, else On.
func (f *Family) defaultOn(v Values) string {
	if f.DefaultOn != nil {
		return f.DefaultOn(v)
	}
	return f.On
}

// Fault is one parsed spec, ready to be put in a Plan.
type Fault struct {
	// Spec is the text the user wrote.
	Spec    string
	Family  *Family
	Trigger Trigger
	Action  Action
	// httpParams are the HTTP-only parameters the spec set.
	httpParams []string
}

// Families lists every fault mcpchaos knows, in the order `mcpchaos faults`
// prints them. It is a plain table, not init-time registration, so a test can
// walk it.
func Families() []*Family {
	return []*Family{stallFamily, burstFamily, eofFamily, halfCloseFamily, delayFamily, dropFamily, duplicateFamily, corruptFamily,
		reorderFamily, fragmentFamily, throttleFamily, oversizeFamily,
		serverRequestFamily, cancelFamily, cancelTaskFamily, listChangedFamily, earlyRequestFamily,
		signalFamily, stderrFloodFamily, lingerFamily,
		idTypeFamily, idCollisionFamily,
		mutateFamily,
		httpErrorFamily, resetFamily, endSessionFamily, forgetSessionFamily, holdHeadersFamily, eventIDReuseFamily, foreignOriginFamily, forgeOriginFamily, credentialsFamily}
}

// TriggerParams lists the keys every fault accepts to say when it fires.
func TriggerParams() []Param { return triggerParams }

// Lookup finds a family by name.
func Lookup(name string) (*Family, bool) {
	for _, f := range Families() {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

// Parse reads a fault spec: NAME or NAME:KEY=VALUE[,KEY=VALUE]...
// Keys are the family's parameters and the shared trigger keys (on, after,
// nth, every, times, p, inflight, position, tool, id, from, until). Every error names the spec and
// says what is allowed.
func Parse(spec string) (*Fault, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(spec), ":")
	name = strings.TrimSpace(name)
	fam, ok := Lookup(name)
	if !ok {
		names := familyNames()
		return nil, fmt.Errorf("fault %q: unknown fault %q%s (known: %s; see mcpchaos faults)", spec, name, suggest(name, names), strings.Join(names, ", "))
	}
	known := map[string]Param{}
	for _, p := range triggerParams {
		known[p.Name] = p
	}
	for _, p := range fam.Params {
		known[p.Name] = p
	}
	set := map[string]string{}
	var httpParams []string
	if rest != "" {
		for _, kv := range strings.Split(rest, ",") {
			key, value, hasValue := strings.Cut(kv, "=")
			key = strings.TrimSpace(key)
			if key == "" && !hasValue {
				return nil, fmt.Errorf("fault %q: empty parameter (a stray comma?); write NAME:KEY=VALUE,KEY=VALUE", spec)
			}
			p, ok := known[key]
			if !ok {
				return nil, fmt.Errorf("fault %q: %s has no parameter %q%s (parameters: %s)", spec, name, key, suggest(key, keys(known)), strings.Join(keys(known), ", "))
			}
			if !hasValue {
				return nil, fmt.Errorf("fault %q: parameter %q needs a value, as in %s=%s", spec, key, key, exampleValue(p))
			}
			if _, dup := set[key]; dup {
				return nil, fmt.Errorf("fault %q: parameter %q is given twice", spec, key)
			}
			value = strings.TrimSpace(value)
			if err := p.check(value); err != nil {
				return nil, fmt.Errorf("fault %q: %s: %v", spec, key, err)
			}
			set[key] = value
			if p.HTTPOnly {
				httpParams = append(httpParams, key)
			}
		}
	}
	v := Values{set: set, params: known}
	if _, given := set["on"]; !given {
		if on := fam.defaultOn(v); on != "" {
			set["on"] = on
		}
	}
	trig, err := newTrigger(v, fam.Phase)
	if err != nil {
		return nil, fmt.Errorf("fault %q: %v", spec, err)
	}
	act, err := fam.New(v)
	if err != nil {
		return nil, fmt.Errorf("fault %q: %v", spec, err)
	}
	return &Fault{Spec: spec, Family: fam, Trigger: trig, Action: act, httpParams: httpParams}, nil
}

func familyNames() []string {
	var names []string
	for _, f := range Families() {
		names = append(names, f.Name)
	}
	return names
}

func keys(m map[string]Param) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func exampleValue(p Param) string {
	switch {
	case p.Default != "":
		return p.Default
	case p.Type == TypeChoice:
		return p.Choices[0]
	case p.Type == TypeDuration:
		return "1s"
	case p.Type == TypePattern:
		return "s2c:response"
	case p.Type == TypeDirection:
		return "s2c"
	case p.Type == TypeSize:
		return "64KiB"
	}
	return "1"
}

// suggest returns ` (did you mean "x"?)` for the closest name within two edits.
func suggest(got string, names []string) string {
	best, bestDist := "", 3
	for _, n := range names {
		if d := editDistance(got, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
