package explore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/suite"
)

// A message pattern names the messages of the baseline a trigger can pick
// out: the trigger's on= pattern and, for a tool call, its tool.
type pattern struct {
	Dir, Kind, Method, Tool string
}

func (p pattern) String() string {
	s := p.Dir + ":" + p.Kind + ":" + p.Method
	if p.Tool != "" {
		s += " (" + p.Tool + ")"
	}
	return s
}

// Position classes: where a message stands among the baseline's messages
// of its pattern. Points of one class and family are taken as equivalent
// until one of them is seen to land.
// The first message of a pattern is a class of its own (a handler's first
// run, a stream's first event); the later ones are one class.
const (
	classFirst = "first"
	classLater = "later"
)

func positionClass(nth int) string {
	if nth == 1 {
		return classFirst
	}
	return classLater
}

// Fault is one fault of a plan: a family acting on the nth message of a
// pattern, with the family's parameters.
type Fault struct {
	Family string
	At     pattern
	// Nth is the message's position among the pattern's (1 is the first);
	// 0 for a family that names its own moment.
	Nth    int
	Params []param
}

// param is one KEY=VALUE of a fault spec, in the order written.
type param struct{ Key, Value string }

// Spec is the fault as mcpchaos test --fault takes it.
func (f Fault) Spec() string {
	var b strings.Builder
	b.WriteString(f.Family)
	sep := ":"
	if f.At.Dir != "" {
		fmt.Fprintf(&b, "%son=%s:%s", sep, f.At.Dir, f.At.Kind)
		if f.At.Method != "" {
			b.WriteString(":" + f.At.Method)
		}
		sep = ","
		if f.Nth > 0 {
			fmt.Fprintf(&b, ",nth=%d", f.Nth)
		}
		if f.At.Tool != "" {
			fmt.Fprintf(&b, ",tool=%s", f.At.Tool)
		}
	}
	for _, p := range f.Params {
		fmt.Fprintf(&b, "%s%s=%s", sep, p.Key, p.Value)
		sep = ","
	}
	return b.String()
}

// with returns f with parameter key set to value.
func (f Fault) with(key, value string) Fault {
	params := make([]param, 0, len(f.Params)+1)
	set := false
	for _, p := range f.Params {
		if p.Key == key {
			p.Value, set = value, true
		}
		params = append(params, p)
	}
	if !set {
		params = append(params, param{key, value})
	}
	f.Params = params
	return f
}

// Label names the fault's family as the coverage table shows it: the
// second-session family apart from the one-session family of its fault.
func (f Fault) Label() string {
	if _, ok := f.param(sessionKey); ok {
		return f.Family + " (second session)"
	}
	return f.Family
}

func (f Fault) param(key string) (string, bool) {
	for _, p := range f.Params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// Point is one fault point: one fault on one message of the baseline.
type Point struct {
	Fault Fault
	// Class is the message's position class among its pattern's.
	Class string
	// Of is how many messages of the pattern the baseline had.
	Of int
	// Expect is, for a client under test, what its program must do under
	// the fault: "failure" when the fault makes a call impossible.
	Expect string
}

// key is the point's equivalence class: the same family on messages of the
// same direction, kind, method and position class, whatever tool a call
// names. Once one point of a class has landed, the others are taken to
// behave alike and skipped (dynamic reduction); a class whose point did not
// land tries its next one.
func (p Point) key() string {
	at := p.Fault.At
	return p.Fault.Family + "|" + at.Dir + ":" + at.Kind + ":" + at.Method + "|" + p.Class + "|" + paramText(p.Fault.Params)
}

func paramText(ps []param) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Key + "=" + p.Value + ",")
	}
	return b.String()
}

// Target says what a search runs against, which decides the families
// that apply: a server probed over stdio or HTTP, or a client program.
type Target struct {
	HTTP bool
	// Stateful says the baseline session spoke the stateful era: it has
	// the initialize handshake and server-to-client requests.
	Stateful bool
	// Client says a client program is under test (explore-client).
	Client bool
}

// Enumerate lists the fault points of a baseline session's messages, in
// the order of the messages, each message's families in the order of the
// family table.
func Enumerate(msgs []suite.Message, t Target) []Point {
	table := families
	if t.Client {
		table = clientFamilies
	}
	toolsUsable := !slices.ContainsFunc(msgs, func(m suite.Message) bool { return strings.ContainsAny(m.Tool, ",=*?[]\\ ") })
	of := map[pattern]int{}
	seen := map[pattern]int{}
	var out []Point
	for _, m := range msgs {
		if !toolsUsable {
			m.Tool = ""
		}
		if ownProbe(m) {
			continue
		}
		pat := patternOf(m)
		seen[pat]++
		of[pat]++
		nth := seen[pat]
		for _, fam := range table {
			if !fam.transport(t.HTTP) || !fam.applies(m, t.Stateful) {
				continue
			}
			f := Fault{Family: fam.name, At: pat, Nth: nth, Params: fam.params}
			if fam.ownMoment {
				if nth > 1 {
					continue
				}
				f.At, f.Nth = pattern{}, 0
			}
			out = append(out, Point{Fault: f, Class: positionClass(nth), Expect: fam.expect})
		}
	}
	for i := range out {
		out[i].Of = of[out[i].Fault.At]
	}
	return out
}

func patternOf(m suite.Message) pattern {
	return pattern{Dir: m.Dir, Kind: m.Kind, Method: m.Method, Tool: m.Tool}
}

// ownProbe says the message is one of the probe's checks that the server
// refuses what it does not know (a method, a tool): faults on it test the
// probe's check, not the server's work.
func ownProbe(m suite.Message) bool {
	return strings.HasPrefix(m.Method, "mcpchaos/") || strings.HasPrefix(m.Tool, "mcpchaos-")
}
