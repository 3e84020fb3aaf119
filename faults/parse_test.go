package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pat parses a pattern the test knows to be valid.
func pat(t testing.TB, s string) Pattern {
	t.Helper()
	p, err := ParsePattern(s)
	if err != nil {
		t.Fatalf("ParsePattern(%q): %v", s, err)
	}
	return p
}

func patPtr(t testing.TB, s string) *Pattern {
	p := pat(t, s)
	return &p
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		family  string
		trigger Trigger
		action  Action
	}{
		// stall
		{
			name:    "stall defaults",
			spec:    "stall",
			family:  "stall",
			trigger: Trigger{On: pat(t, ""), Times: 1, Phase: Before},
			action:  stall{},
		},
		{
			name:    "stall with an empty parameter list",
			spec:    "stall:",
			family:  "stall",
			trigger: Trigger{On: pat(t, ""), Times: 1, Phase: Before},
			action:  stall{},
		},
		{
			name:   "stall every parameter",
			spec:   "stall:dir=c2s,for=250ms,shrink=true,on=s2c:response:tools/call,after=c2s:request:initialize,nth=2,times=3,p=0.5,inflight=2,position=after",
			family: "stall",
			trigger: Trigger{
				On: pat(t, "s2c:response:tools/call"), After: patPtr(t, "c2s:request:initialize"),
				Nth: 2, Times: 3, P: 0.5, HasP: true, InFlight: 2, Phase: After,
			},
			action: stall{dir: c2s, d: 250 * time.Millisecond, shrink: true},
		},
		{
			name:    "stall for forever is zero",
			spec:    "stall:for=forever,dir=s2c,shrink=false",
			family:  "stall",
			trigger: Trigger{On: pat(t, ""), Times: 1, Phase: Before},
			action:  stall{dir: s2c},
		},
		{
			name:    "stall shrink accepts strconv booleans",
			spec:    "stall:shrink=1",
			family:  "stall",
			trigger: Trigger{On: pat(t, ""), Times: 1, Phase: Before},
			action:  stall{shrink: true},
		},
		{
			name:    "spaces around the spec, keys and values are trimmed",
			spec:    "  stall: for = 5s ,  dir=s2c ",
			family:  "stall",
			trigger: Trigger{On: pat(t, ""), Times: 1, Phase: Before},
			action:  stall{dir: s2c, d: 5 * time.Second},
		},

		// burst
		{
			name:    "burst defaults",
			spec:    "burst",
			family:  "burst",
			trigger: Trigger{On: pat(t, ""), Times: 1, Phase: Before},
			action:  burst{count: 10, method: "notifications/progress", dir: s2c, uri: "mcpchaos://resource"},
		},
		{
			name:   "burst every parameter",
			spec:   "burst:count=3,method=notifications/message,dir=c2s,gap=10ms,uri=doc://a,on=notifications/*,after=s2c:response:initialize,every=2,times=4,p=1,inflight=1,position=after",
			family: "burst",
			trigger: Trigger{
				On: pat(t, "notifications/*"), After: patPtr(t, "s2c:response:initialize"),
				Every: 2, Times: 4, P: 1, HasP: true, InFlight: 1, Phase: After,
			},
			action: burst{count: 3, method: "notifications/message", dir: c2s, gap: 10 * time.Millisecond, uri: "doc://a"},
		},
		{
			name:    "burst list_changed with every and no times has no limit",
			spec:    "burst:method=notifications/tools/list_changed,count=1,every=1",
			family:  "burst",
			trigger: Trigger{On: pat(t, ""), Every: 1, Phase: Before},
			action:  burst{count: 1, method: "notifications/tools/list_changed", dir: s2c, uri: "mcpchaos://resource"},
		},

		// eof
		{
			name:    "eof defaults",
			spec:    "eof",
			family:  "eof",
			trigger: Trigger{On: pat(t, ""), Times: 1, Phase: After},
			action:  eof{},
		},
		{
			name:   "eof every trigger parameter",
			spec:   "eof:on=c2s:request:tools/call,after=ping,nth=4,times=0,p=0,inflight=3,position=before",
			family: "eof",
			trigger: Trigger{
				On: pat(t, "c2s:request:tools/call"), After: patPtr(t, "ping"),
				Nth: 4, Times: 0, P: 0, HasP: true, InFlight: 3, Phase: Before,
			},
			action: eof{},
		},
		{
			name:    "eof position=after keeps After",
			spec:    "eof:position=after",
			family:  "eof",
			trigger: Trigger{On: pat(t, ""), Times: 1, Phase: After},
			action:  eof{},
		},
		{
			name:    "eof empty on and after match anything",
			spec:    "eof:on=,after=*",
			family:  "eof",
			trigger: Trigger{On: pat(t, ""), After: patPtr(t, "*"), Times: 1, Phase: After},
			action:  eof{},
		},

		// half-close
		{
			name:    "half-close defaults to s2c",
			spec:    "half-close",
			family:  "half-close",
			trigger: Trigger{On: pat(t, ""), Times: 1, Phase: After},
			action:  halfClose{dir: s2c},
		},
		{
			name:   "half-close every parameter",
			spec:   "half-close:dir=c2s,on=c2s:request:tools/call,every=3,position=before",
			family: "half-close",
			trigger: Trigger{
				On: pat(t, "c2s:request:tools/call"), Every: 3, Phase: Before,
			},
			action: halfClose{dir: c2s},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.spec)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.spec, err)
			}
			if f.Spec != tc.spec {
				t.Errorf("Spec = %q; want the input %q", f.Spec, tc.spec)
			}
			if f.Family == nil || f.Family.Name != tc.family {
				t.Fatalf("Family = %v; want %s", f.Family, tc.family)
			}
			if fam, _ := Lookup(tc.family); f.Family != fam {
				t.Errorf("Family is not the registered %s family", tc.family)
			}
			if diff := cmp.Diff(tc.trigger, f.Trigger, cmpOpts); diff != "" {
				t.Errorf("Trigger (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.action, f.Action, cmpOpts); diff != "" {
				t.Errorf("Action (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const (
		stallParams = "(parameters: after, dir, every, for, from, id, inflight, nth, on, p, position, session, shrink, stream, times, tool, until)"
		eofParams   = "(parameters: after, every, from, id, inflight, nth, on, p, position, server, session, stream, times, tool, until)"
		patternHelp = `is not a direction (c2s, s2c) or a kind (request, notification, response, error, invalid), and only the last part may be a method`
	)
	known := knownFaults
	tests := []struct {
		name    string
		spec    string
		want    []string // substrings the error must contain
		notWant []string // substrings it must not contain
	}{
		// Unknown fault.
		{name: "unknown fault with suggestion", spec: "stal",
			want: []string{`unknown fault "stal" (did you mean "stall"?)`, known}},
		{name: "unknown fault with parameters", spec: "stal:for=1s",
			want: []string{`unknown fault "stal" (did you mean "stall"?)`, known}},
		{name: "half-close misspelt", spec: "halfclose:dir=s2c",
			want: []string{`unknown fault "halfclose" (did you mean "half-close"?)`}},
		{name: "burst typo", spec: "brust",
			want: []string{`unknown fault "brust" (did you mean "burst"?)`}},
		{name: "unknown fault without suggestion", spec: "latency:ms=100",
			want: []string{`unknown fault "latency"`, known}, notWant: []string{"did you mean"}},
		{name: "empty spec", spec: "",
			want: []string{`unknown fault ""`, known}, notWant: []string{"did you mean"}},
		{name: "name is case-sensitive", spec: "EOF",
			want: []string{`unknown fault "EOF"`, known}},

		// Unknown parameter.
		{name: "unknown parameter with suggestion", spec: "stall:fo=1s",
			want: []string{`stall has no parameter "fo" (did you mean "for"?)`, stallParams}},
		{name: "trigger key misspelt", spec: "eof:evry=2",
			want: []string{`eof has no parameter "evry" (did you mean "every"?)`, eofParams}},
		{name: "family parameter of another family", spec: "eof:dir=s2c",
			want: []string{`eof has no parameter "dir"`, eofParams}},
		{name: "burst parameter misspelt", spec: "burst:cuont=3",
			want: []string{`burst has no parameter "cuont" (did you mean "count"?)`, "count", "gap", "method"}},
		{name: "unknown parameter without suggestion", spec: "eof:xyzzy=1",
			want: []string{`eof has no parameter "xyzzy"`, eofParams}, notWant: []string{"did you mean"}},
		{name: "trailing comma is an empty parameter", spec: "stall:for=1s,",
			want: []string{`empty parameter (a stray comma?)`}},
		{name: "stall for=0s is ambiguous", spec: "stall:for=0s",
			want: []string{`for: "0s" is not a duration like 250ms, 5s or forever`}},
		{name: "gap cannot be forever", spec: "burst:gap=forever",
			want: []string{`gap: "forever" is not a duration like 0s, 250ms or 5s`}},
		{name: "burst count over the cap", spec: "burst:count=100001",
			want: []string{"count: must be between 1 and 100000"}},

		// Missing value: the error shows a value that works.
		{name: "missing value with default", spec: "stall:for",
			want: []string{`parameter "for" needs a value, as in for=forever`}},
		{name: "missing direction", spec: "stall:dir",
			want: []string{`parameter "dir" needs a value, as in dir=s2c`}},
		{name: "missing choice", spec: "eof:position",
			want: []string{`parameter "position" needs a value, as in position=before`}},
		{name: "missing pattern", spec: "eof:on",
			want: []string{`parameter "on" needs a value, as in on=s2c:response`}},
		{name: "missing int", spec: "eof:nth,times=2",
			want: []string{`parameter "nth" needs a value, as in nth=1`}},
		{name: "missing probability", spec: "eof:p",
			want: []string{`parameter "p" needs a value, as in p=1`}},

		// Duplicate key.
		{name: "duplicate key", spec: "stall:for=1s,for=2s",
			want: []string{`parameter "for" is given twice`}},
		{name: "duplicate trigger key", spec: "eof:on=s2c,times=1,on=c2s",
			want: []string{`parameter "on" is given twice`}},

		// Bad values.
		{name: "bad int", spec: "burst:count=many",
			want: []string{`count: "many" is not a whole number >= 0`}},
		{name: "negative int", spec: "eof:nth=-1",
			want: []string{`nth: "-1" is not a whole number >= 0`}},
		{name: "fractional int", spec: "eof:times=1.5",
			want: []string{`times: "1.5" is not a whole number >= 0`}},
		{name: "int overflow", spec: "eof:inflight=99999999999999999999",
			want: []string{`inflight: "99999999999999999999" is not a whole number >= 0`}},
		{name: "empty int", spec: "eof:every=",
			want: []string{`every: "" is not a whole number >= 0`}},
		{name: "duration without unit", spec: "stall:for=5",
			want: []string{`for: "5" is not a duration like 250ms, 5s or forever`}},
		{name: "negative duration", spec: "stall:for=-1s",
			want: []string{`for: "-1s" is not a duration like 250ms, 5s or forever`}},
		{name: "bad gap", spec: "burst:gap=soon",
			want: []string{`gap: "soon" is not a duration like 0s, 250ms or 5s`}},
		{name: "bad bool", spec: "stall:shrink=yes",
			want: []string{`shrink: "yes" is not true or false`}},
		{name: "probability above 1", spec: "eof:p=1.5",
			want: []string{`p: "1.5" is not a probability between 0 and 1`}},
		{name: "negative probability", spec: "eof:p=-0.1",
			want: []string{`p: "-0.1" is not a probability between 0 and 1`}},
		{name: "probability as a percentage", spec: "eof:p=50%",
			want: []string{`p: "50%" is not a probability between 0 and 1`}},
		{name: "infinite probability", spec: "eof:p=Inf",
			want: []string{`p: "Inf" is not a probability between 0 and 1`}},
		{name: "NaN probability", spec: "eof:p=NaN",
			want: []string{`p: "NaN" is not a probability between 0 and 1`}},
		{name: "lower-case nan probability", spec: "eof:p=nan",
			want: []string{`p: "nan" is not a probability between 0 and 1`}},
		{name: "bad direction", spec: "stall:dir=up",
			want: []string{`dir: unknown direction "up" (want c2s for client to server or s2c for server to client)`}},
		{name: "direction is case-sensitive", spec: "half-close:dir=S2C",
			want: []string{`dir: unknown direction "S2C"`}},
		{name: "bad choice", spec: "eof:position=during",
			want: []string{`position: "during" is not one of before, after`}},
		{name: "bad on pattern", spec: "eof:on=foo:bar",
			want: []string{`on: pattern "foo:bar": "foo" ` + patternHelp}},
		{name: "bad after pattern", spec: "eof:after=s2c:",
			want: []string{`after: pattern "s2c:": "" ` + patternHelp}},
		{name: "empty burst method", spec: "burst:method=",
			want: []string{`method: empty value`}},

		// Trigger rules.
		{name: "nth=0", spec: "eof:nth=0",
			want: []string{`nth: counts from 1`}},
		{name: "every=0", spec: "burst:every=0",
			want: []string{`every: must be 1 or more`}},
		{name: "nth and every", spec: "stall:nth=2,every=3",
			want: []string{`nth and every cannot be combined`, "nth fires once on the Nth match", "every fires on each Nth match"}},

		// Family rules.
		{name: "burst count=0", spec: "burst:count=0",
			want: []string{`count: must be between 1 and 100000`}},
		{name: "burst non-notification method", spec: "burst:method=tools/list",
			want: []string{`method: "tools/list" is not a notification method (they start with notifications/)`}},
		{name: "burst method without the slash", spec: "burst:method=notifications",
			want: []string{`method: "notifications" is not a notification method`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.spec)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v; want an error", tc.spec, f)
			}
			if f != nil {
				t.Errorf("Parse(%q) returned a Fault with its error", tc.spec)
			}
			msg := err.Error()
			if prefix := fmt.Sprintf("fault %q: ", tc.spec); !strings.HasPrefix(msg, prefix) {
				t.Errorf("error %q does not start with %q (it must name the spec)", msg, prefix)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("error %q contains %q", msg, w)
				}
			}
		})
	}
}

// TestParseUnknownKeyListsFamilyParams checks that the parameter list in an
// error is the family's own parameters plus the trigger keys, for every family.
func TestParseUnknownKeyListsFamilyParams(t *testing.T) {
	for _, fam := range Families() {
		t.Run(fam.Name, func(t *testing.T) {
			_, err := Parse(fam.Name + ":zzzzzz=1")
			if err == nil {
				t.Fatal("no error for an unknown parameter")
			}
			for _, p := range append(TriggerParams(), fam.Params...) {
				if !strings.Contains(err.Error(), p.Name) {
					t.Errorf("error %q does not list parameter %q", err, p.Name)
				}
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"stall", "burst", "eof", "half-close"}
	tests := []struct {
		got  string
		want string
	}{
		{"stall", ` (did you mean "stall"?)`},
		{"stal", ` (did you mean "stall"?)`},
		{"stalll", ` (did you mean "stall"?)`},
		{"tsall", ` (did you mean "stall"?)`},
		{"eff", ` (did you mean "eof"?)`},
		{"halfclose", ` (did you mean "half-close"?)`},
		{"half_close", ` (did you mean "half-close"?)`},
		{"xyz", ""},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.got, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, suggest(tc.got, names)); diff != "" {
				t.Errorf("suggest(%q) (-want +got):\n%s", tc.got, diff)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"stall", "stall", 0},
		{"stal", "stall", 1},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
	}
	for _, tc := range tests {
		t.Run(tc.a+"/"+tc.b, func(t *testing.T) {
			if got := editDistance(tc.a, tc.b); got != tc.want {
				t.Errorf("editDistance(%q, %q) = %d; want %d", tc.a, tc.b, got, tc.want)
			}
			if got := editDistance(tc.b, tc.a); got != tc.want {
				t.Errorf("editDistance(%q, %q) = %d; want %d (it must be symmetric)", tc.b, tc.a, got, tc.want)
			}
		})
	}
}

func TestParamUsage(t *testing.T) {
	tests := []struct {
		name  string
		param Param
		want  string
	}{
		{"with default", Param{Name: "count", Type: TypeInt, Default: "10", Doc: "how many"}, "count=int (default 10): how many"},
		{"without default", Param{Name: "dir", Type: TypeDirection, Doc: "where"}, "dir=direction: where"},
		{"choice", Param{Name: "position", Type: TypeChoice, Choices: []string{"before", "after"}, Doc: "when"}, "position=before|after: when"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.param.Usage()); diff != "" {
				t.Errorf("Usage() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValuesUndeclaredPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("reading an undeclared parameter did not panic")
		}
	}()
	Values{}.Int("nope")
}

func TestPhaseString(t *testing.T) {
	if diff := cmp.Diff([]string{"before", "after"}, []string{Before.String(), After.String()}); diff != "" {
		t.Errorf("Phase.String (-want +got):\n%s", diff)
	}
}
