package faults

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/wire"
)

func TestParsePattern(t *testing.T) {
	tests := []struct {
		in   string
		want Pattern
	}{
		{"", Pattern{}},
		{"*", Pattern{text: "*"}},
		{"s2c", Pattern{Dir: s2c, text: "s2c"}},
		{"c2s", Pattern{Dir: c2s, text: "c2s"}},
		{"response", Pattern{Kind: wire.Response, Kinded: true, text: "response"}},
		{"invalid", Pattern{Kind: wire.Invalid, Kinded: true, text: "invalid"}},
		{"tools/call", Pattern{Method: "tools/call", text: "tools/call"}},
		{"notifications/*", Pattern{Method: "notifications/*", text: "notifications/*"}},
		{"s2c:response", Pattern{Dir: s2c, Kind: wire.Response, Kinded: true, text: "s2c:response"}},
		{"c2s:tools/call", Pattern{Dir: c2s, Method: "tools/call", text: "c2s:tools/call"}},
		{"error:tools/*", Pattern{Kind: wire.Error, Kinded: true, Method: "tools/*", text: "error:tools/*"}},
		{"s2c:response:tools/call", Pattern{Dir: s2c, Kind: wire.Response, Kinded: true, Method: "tools/call", text: "s2c:response:tools/call"}},
		{"c2s:notification:notifications/*", Pattern{Dir: c2s, Kind: wire.Notification, Kinded: true, Method: "notifications/*", text: "c2s:notification:notifications/*"}},
		{"s2c:*", Pattern{Dir: s2c, Method: "*", text: "s2c:*"}},
		// Only the first part can be a direction and only the first part
		// after it a kind; in the last position a direction or kind name is
		// read as a method.
		{"request:s2c", Pattern{Kind: wire.Request, Kinded: true, Method: "s2c", text: "request:s2c"}},
		{"s2c:c2s", Pattern{Dir: s2c, Method: "c2s", text: "s2c:c2s"}},
		{"s2c:request:response", Pattern{Dir: s2c, Kind: wire.Request, Kinded: true, Method: "response", text: "s2c:request:response"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParsePattern(tc.in)
			if err != nil {
				t.Fatalf("ParsePattern(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got, cmpOpts); diff != "" {
				t.Errorf("ParsePattern(%q) (-want +got):\n%s", tc.in, diff)
			}
			if got.String() != tc.in {
				t.Errorf("String() = %q; want the input %q", got.String(), tc.in)
			}
		})
	}
}

func TestParsePatternErrors(t *testing.T) {
	tests := []struct {
		in  string
		bad string // the part the error must name
	}{
		{"foo:bar", "foo"},
		{"foo:tools/call", "foo"},
		{"s2c:foo:bar", "foo"},
		{"s2c:", ""},
		{":tools/call", ""},
		{"s2c::tools/call", ""},
		{"response:s2c:x", "s2c"},          // direction after the kind
		{"request:response:x", "response"}, // two kinds
		{"s2c:c2s:x", "c2s"},               // two directions
		{"*:tools/call", "*"},
		{"tools:call", "tools"}, // a method cannot contain a colon
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			p, err := ParsePattern(tc.in)
			if err == nil {
				t.Fatalf("ParsePattern(%q) = %+v; want an error", tc.in, p)
			}
			for _, want := range []string{
				`pattern "` + tc.in + `": "` + tc.bad + `" is not a direction`,
				"(c2s, s2c)",
				"(request, notification, response, error, invalid)",
				"only the last part may be a method",
			} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if diff := cmp.Diff(Pattern{}, p, cmpOpts); diff != "" {
				t.Errorf("pattern returned with the error is not zero (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatternMatches(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		f       frame
		method  string // what Step.Method would say
		want    bool
	}{
		{"empty matches anything", "", garbage(c2s), "", true},
		{"star matches a request", "*", request(s2c, "1", "sampling/createMessage", ""), "sampling/createMessage", true},
		{"star matches an answer of unknown method", "*", response(s2c, "9"), "", true},
		{"direction", "s2c", notif(s2c, "notifications/message"), "notifications/message", true},
		{"wrong direction", "s2c", notif(c2s, "notifications/initialized"), "notifications/initialized", false},
		{"kind", "notification", notif(c2s, "notifications/initialized"), "notifications/initialized", true},
		{"wrong kind", "request", notif(c2s, "notifications/initialized"), "notifications/initialized", false},
		{"error is not response", "response", errorAnswer(s2c, "1"), "tools/call", false},
		{"error kind", "s2c:error", errorAnswer(s2c, "1"), "tools/call", true},
		{"invalid kind", "c2s:invalid", garbage(c2s), "", true},
		{"exact method", "tools/call", request(c2s, "1", "tools/call", ""), "tools/call", true},
		{"exact method is not a prefix", "tools/call", request(c2s, "1", "tools/callx", ""), "tools/callx", false},
		{"exact method is not a suffix", "call", request(c2s, "1", "tools/call", ""), "tools/call", false},
		{"response matches its request's method", "s2c:response:tools/call", response(s2c, "1"), "tools/call", true},
		{"response of another method", "s2c:response:tools/call", response(s2c, "1"), "tools/list", false},
		{"response to an unknown request", "s2c:response:tools/call", response(s2c, "1"), "", false},
		{"response in the wrong direction", "s2c:response:tools/call", response(c2s, "1"), "tools/call", false},
		{"request is not a response", "s2c:response:tools/call", request(s2c, "1", "tools/call", ""), "tools/call", false},
		{"glob crosses slashes", "notifications/*", notif(s2c, "notifications/tools/list_changed"), "notifications/tools/list_changed", true},
		{"glob matches empty rest", "notifications/*", notif(s2c, "notifications/"), "notifications/", true},
		{"glob needs its prefix", "notifications/*", request(c2s, "1", "tools/list", ""), "tools/list", false},
		{"glob in the middle", "notifications/*/list_changed", notif(s2c, "notifications/prompts/list_changed"), "notifications/prompts/list_changed", true},
		{"glob in the middle needs the suffix", "notifications/*/list_changed", notif(s2c, "notifications/message"), "notifications/message", false},
		{"leading glob", "*list_changed", notif(s2c, "notifications/resources/list_changed"), "notifications/resources/list_changed", true},
		{"star method needs nothing", "s2c:*", response(s2c, "1"), "", true},
		{"two globs", "*/*", request(c2s, "1", "tools/call", ""), "tools/call", true},
		{"two globs need the slash", "*/*", request(c2s, "1", "ping", ""), "ping", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := pat(t, tc.pattern)
			m := classify(t, tc.f)
			if got := p.Matches(tc.f.dir, &m, tc.method); got != tc.want {
				t.Errorf("%q.Matches(%s, method %q) = %v; want %v", tc.pattern, tc.f, tc.method, got, tc.want)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"a*", "a", true},
		{"a*", "ba", false},
		{"*a", "ba", true},
		{"*a", "ab", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXcYb", false},
		{"a**b", "ab", true},
		{"*b*", "abc", true},
		{"*x*", "abc", false},
		{"tools/*", "tools/", true},
		{"tools/*", "tools", false},
		{"a*a*a*a*a*a*a*a*b", strings.Repeat("a", 40), false},
		{"é*", "été", true},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+"|"+tc.name, func(t *testing.T) {
			if got := glob(tc.pattern, tc.name); got != tc.want {
				t.Errorf("glob(%q, %q) = %v; want %v", tc.pattern, tc.name, got, tc.want)
			}
		})
	}
}

// TestStepMethod checks that answers are matched by their request's method:
// Receive pairs an answer with the request that travelled the other way.
func TestStepMethod(t *testing.T) {
	tests := []struct {
		name   string
		frames []frame
		want   string // Step.Method of the last frame
		answer bool   // whether the last frame has Answers set
	}{
		{"request", []frame{request(c2s, "1", "tools/call", "")}, "tools/call", false},
		{"notification", []frame{notif(s2c, "notifications/message")}, "notifications/message", false},
		{"response to a c2s request", []frame{request(c2s, "1", "tools/call", ""), response(s2c, "1")}, "tools/call", true},
		{"error to a c2s request", []frame{request(c2s, `"a"`, "resources/read", ""), errorAnswer(s2c, `"a"`)}, "resources/read", true},
		{"response to a s2c request", []frame{request(s2c, "1", "sampling/createMessage", ""), response(c2s, "1")}, "sampling/createMessage", true},
		{"response in the request's own direction", []frame{request(c2s, "1", "tools/call", ""), response(c2s, "1")}, "", false},
		{"response to an unknown id", []frame{request(c2s, "1", "tools/call", ""), response(s2c, "2")}, "", false},
		{"ids are JSON text: 1 is not \"1\"", []frame{request(c2s, "1", "tools/call", ""), response(s2c, `"1"`)}, "", false},
		{"the same id in both directions", []frame{request(c2s, "1", "tools/call", ""), request(s2c, "1", "roots/list", ""), response(c2s, "1")}, "roots/list", true},
		{"a second answer finds nothing", []frame{request(c2s, "1", "tools/call", ""), response(s2c, "1"), response(s2c, "1")}, "", false},
		{"an id reused after its answer", []frame{request(c2s, "1", "tools/call", ""), response(s2c, "1"), request(c2s, "1", "ping", ""), response(s2c, "1")}, "ping", true},
		{"error with null id", []frame{request(c2s, "1", "tools/call", ""), errorAnswer(s2c, "null")}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A trigger on answers by method makes the plan pair them.
			byMethod, err := Parse("drop:on=response:never/this")
			if err != nil {
				t.Fatal(err)
			}
			p := NewPlan(1, []*Fault{byMethod})
			var s *Step
			for _, f := range tc.frames {
				m := classify(t, f)
				s = p.Receive(f.dir, &m)
			}
			if got := s.Method(); got != tc.want {
				t.Errorf("Step.Method() = %q; want %q", got, tc.want)
			}
			if got := s.Answers != nil; got != tc.answer {
				t.Errorf("Step.Answers = %+v; want set = %v", s.Answers, tc.answer)
			}
		})
	}
}

// TestPatternMatchesThroughPlan checks `on=s2c:response:tools/call` end to end:
// it fires on the response to a tools/call and on nothing else.
func TestPatternMatchesThroughPlan(t *testing.T) {
	frames := []frame{
		request(c2s, "1", "tools/list", ""),
		response(s2c, "1"), // answers tools/list: no
		request(c2s, "2", "tools/call", ""),
		request(s2c, "2", "tools/call", ""), // a request, not a response: no
		response(c2s, "2"),                  // answers the s2c request, wrong direction: no
		response(s2c, "2"),                  // answers tools/call: yes
		response(s2c, "3"),                  // unknown: no
	}
	got := firedAt(runPlan(t, 1, []string{"eof:on=s2c:response:tools/call,times=0"}, frames), "eof#1")
	if diff := cmp.Diff([]int{6}, got); diff != "" {
		t.Errorf("fired at (-want +got):\n%s", diff)
	}
}

// globRegexp is the reference glob: the pattern's literal runs quoted and
// joined by `.*`, anchored, with `.` matching newlines too.
func globRegexp(pattern string) *regexp.Regexp {
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`^(?s)` + strings.Join(parts, ".*") + `$`)
}

// TestGlobAgainstRegexp compares glob with the reference on random patterns
// and names over a small alphabet, where stars and partial matches collide.
func TestGlobAgainstRegexp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func(alphabet string, max int) string {
		b := make([]byte, r.IntN(max+1))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 20000 {
		pattern, name := word("ab/*", 8), word("ab/", 12)
		if got, want := glob(pattern, name), globRegexp(pattern).MatchString(name); got != want {
			t.Fatalf("glob(%q, %q) = %v; want %v", pattern, name, got, want)
		}
	}
}

// TestGlobIsNotExponential: the name comes from a peer and matching runs under
// the plan's lock, so a pattern with many stars must not backtrack
// exponentially. The first pattern took 25s on a 50-byte name with the old
// recursive glob.
func TestGlobIsNotExponential(t *testing.T) {
	tests := []struct{ pattern, name string }{
		{"*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 5000)},
		{"notifications/*/*/*/*/x", "notifications/" + strings.Repeat("/", 5000)},
		{strings.Repeat("*a", 50) + "b", strings.Repeat("a", 5000)},
	}
	for _, tc := range tests {
		t.Run(tc.pattern, func(t *testing.T) {
			start := time.Now()
			if glob(tc.pattern, tc.name) {
				t.Errorf("glob(%q, ...) = true; want false", tc.pattern)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("glob(%q) on a %d-byte name took %v", tc.pattern, len(tc.name), d)
			}
		})
	}
}

// A plan keeps the requests in flight only when a fault or a trigger reads
// them: the relay pays for the table only then.
func TestNeedsInFlight(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want bool
	}{
		{"drop:on=c2s:request:tools/call", false},
		{"delay:p=0", false},
		{"stall:on=c2s:request:tools/call", false},
		{"drop:on=notification:notifications/*", false},
		{"drop:on=s2c:response", false}, // every response: no method to look up
		{"drop:on=s2c:response:tools/call", true},
		{"drop:on=tools/call", true}, // any kind, answers included
		{"drop:on=s2c:error:*", true},
		{"drop:after=s2c:response:initialize", true},
		{"eof:on=c2s:request:tools/call,inflight=3", true},
		{"drop:on=c2s:request:tools/call,tool=echo", true},
		{"cancel", true},
		{"burst:on=s2c:notification:notifications/progress", true},
		{"reorder", true},
		{"id-type", true},
		{"id-collision", true},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			f, err := Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := needsInFlight(f); got != tc.want {
				t.Errorf("needsInFlight(%s) = %v; want %v", tc.spec, got, tc.want)
			}
		})
	}
}

// Every family whose action reads the requests in flight says so: a file
// that defines a family and reads FireContext's in-flight views must mark
// it InFlight, or a plan of that fault alone would not keep the table.
func TestFamiliesThatReadInFlightSaySo(t *testing.T) {
	reads := regexp.MustCompile(`c\.Sent\(|c\.Answers|c\.own\(\)|c\.idInUse\(|c\.rewriteID\(|c\.rewritten\(\)`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") || file == "idmap.go" || file == "plan.go" {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(src, []byte("&Family{")) && reads.Match(src) && !bytes.Contains(src, []byte("InFlight: true")) {
			t.Errorf("%s defines a family that reads the requests in flight but does not set InFlight: true", file)
		}
	}
}

// A plan watches the directions its triggers can match, both when it keeps
// requests in flight or counts messages for after=, and always the client's
// (its messages say the era).
func TestWatches(t *testing.T) {
	for _, tc := range []struct {
		spec     string
		toClient bool
	}{
		{"drop:on=c2s:request:tools/call", false},
		{"stall:on=c2s:request:tools/call", false},
		{"drop:on=s2c:notification", true},
		{"delay:p=0", true},
		{"drop:on=c2s:request:tools/call,after=c2s:request:initialize", true},
		{"eof:on=c2s:request:tools/call,inflight=3", true},
		{"cancel:on=c2s:request:tools/call", true},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			f, err := Parse(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			p := NewPlan(1, []*Fault{f})
			if !p.Watches(wire.ToServer) {
				t.Error("the plan does not watch the client's messages")
			}
			if got := p.Watches(wire.ToClient); got != tc.toClient {
				t.Errorf("Watches(s2c) = %v; want %v", got, tc.toClient)
			}
		})
	}
	if NewPlan(1, nil).Watches(wire.ToServer) {
		t.Error("an empty plan watches the client's messages")
	}
}

// A local fault's effects stay with the message that fired it: every
// firing, on every kind of message in both directions, touches nothing but
// that message. The stdio relay splices a direction only local faults can
// reach, so a local fault that wrote, stalled or closed anything else
// would act on bytes that pass it unseen.
func TestLocalFaultsStayWithTheirMessage(t *testing.T) {
	var frames []frame
	for i, dir := range []wire.Direction{c2s, s2c} {
		id := strconv.Itoa(i + 1)
		frames = append(frames, request(dir, id, "tools/call", `"t`+id+`"`), progress(dir.Reverse(), `"t`+id+`"`),
			response(dir.Reverse(), id), notif(dir, "notifications/message"), errorAnswer(dir.Reverse(), id), garbage(dir))
	}
	for _, fam := range Families() {
		if !fam.Local {
			continue
		}
		fired := 0
		for _, spec := range []string{fam.Name + ":p=1", fam.Name + ":on=s2c,p=1", fam.Name + ":on=c2s,p=1,position=after"} {
			if fam.Name == "corrupt" {
				spec += ",mode=text"
			}
			if _, err := Parse(spec); err != nil {
				continue // position=after is not possible for every local fault
			}
			for _, d := range runPlan(t, 1, []string{spec}, frames) {
				fired++
				e := d.Effect
				e.Drop, e.Delay, e.Copies, e.Replace, e.Fragment, e.Skipped, e.Detail = false, 0, 0, nil, nil, false, ""
				if diff := cmp.Diff(Effect{}, e); diff != "" {
					t.Errorf("%s fired on %v and reaches beyond the message (-want +got):\n%s", spec, d, diff)
				}
			}
		}
		if fired == 0 {
			t.Errorf("%s never fired: nothing says its effects stay with their message", fam.Name)
		}
	}
}

// A plan reaches a direction it watches, and every direction once one of
// its faults may act beyond the message that fired it.
func TestReaches(t *testing.T) {
	for _, tc := range []struct {
		specs    []string
		toClient bool
	}{
		{[]string{"drop:on=c2s:request:tools/call"}, false},
		{[]string{"delay:on=c2s,for=1s", "duplicate:on=c2s:notification"}, false},
		{[]string{"drop:on=s2c:response"}, true},
		{[]string{"stall:on=c2s:request:tools/call"}, true},
		{[]string{"burst:on=c2s:request:tools/call"}, true},
		{[]string{"eof:on=c2s:request:tools/call"}, true},
		{[]string{"drop:on=c2s:request:tools/call", "signal:on=c2s:request:tools/call"}, true},
	} {
		t.Run(strings.Join(tc.specs, "+"), func(t *testing.T) {
			p := NewPlan(1, mustParse(t, tc.specs...))
			if !p.Reaches(wire.ToServer) {
				t.Error("the plan does not reach the client's messages")
			}
			if got := p.Reaches(wire.ToClient); got != tc.toClient {
				t.Errorf("Reaches(s2c) = %v; want %v", got, tc.toClient)
			}
		})
	}
}
