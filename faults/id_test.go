package faults

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/wire"
)

// passed is one frame as the relay writes it on under a plan of id faults.
type passed struct {
	Dir    wire.Direction
	Raw    string // what the receiver gets
	Detail string // the fault's decision, or the translation's note
}

// relayIDs feeds frames through a plan as the relay does and returns what it
// forwards: the fault's rewrite, an answer translated back, or the frame.
func relayIDs(t *testing.T, seed uint64, specs []string, frames []frame) ([]passed, *Plan) {
	t.Helper()
	p := NewPlan(seed, mustParse(t, specs...))
	var out []passed
	for _, f := range frames {
		m := classify(t, f)
		step := p.Receive(f.dir, &m)
		got := passed{Dir: f.dir, Raw: f.raw, Detail: step.RewriteNote}
		if step.Rewritten != nil {
			got.Raw = string(step.Rewritten)
		}
		for _, fi := range p.Decide(Before, step) {
			got.Detail = fi.Effect.Detail
			if fi.Effect.Rewrite != nil {
				got.Raw = string(fi.Effect.Rewrite)
			}
		}
		out = append(out, got)
	}
	return out, p
}

func TestIDFaultsParse(t *testing.T) {
	tests := []struct {
		spec string
		want Action
		on   string
	}{
		{"id-type", idType{to: "flip"}, "c2s:request:tools/call"},
		{"id-type:to=string", idType{to: "string"}, "c2s:request:tools/call"},
		{"id-type:to=number,on=s2c:request", idType{to: "number"}, "s2c:request"},
		{"id-collision", idCollision{with: "oldest"}, "c2s:request:tools/call"},
		{"id-collision:with=random,on=c2s:request", idCollision{with: "random"}, "c2s:request"},
	}
	for _, tc := range tests {
		f := mustParse(t, tc.spec)[0]
		if diff := cmp.Diff(tc.want, f.Action, cmpOpts); diff != "" {
			t.Errorf("%s: action (-want +got):\n%s", tc.spec, diff)
		}
		on, _ := ParsePattern(tc.on)
		if diff := cmp.Diff(on, f.Trigger.On, cmpOpts); diff != "" {
			t.Errorf("%s: trigger on (-want +got):\n%s", tc.spec, diff)
		}
	}
	bad := []struct{ spec, want string }{
		{"id-type:position=after", "position: after is not possible"},
		{"id-type:to=bool", `"bool" is not one of flip, string, number`},
		{"id-collision:position=after", "position: after is not possible"},
		{"id-collision:with=newest", `"newest" is not one of oldest, random`},
	}
	for _, tc := range bad {
		_, err := Parse(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

func TestIDType(t *testing.T) {
	call := func(id string) frame { return request(c2s, id, "tools/call", "") }
	tests := []struct {
		name   string
		specs  []string
		frames []frame
		want   []passed
	}{
		{
			name:   "a number goes on as a string and its answer comes back as the number",
			specs:  []string{"id-type"},
			frames: []frame{request(c2s, "0", "initialize", ""), call("1"), response(s2c, `"1"`), response(s2c, "0")},
			want: []passed{
				{c2s, request(c2s, "0", "initialize", "").raw, ""},
				{c2s, call(`"1"`).raw, `send the request on with id "1" instead of 1; an answer with id "1" goes back to the client as 1`},
				{s2c, response(s2c, "1").raw, `id "1" translated back to 1, the id the client gave the request that fault id-type#1 rewrote`},
				{s2c, response(s2c, "0").raw, ""},
			},
		},
		{
			name:   "an answer with the wrong id type is not translated, and a late right one still is",
			specs:  []string{"id-type"},
			frames: []frame{call("1"), errorAnswer(s2c, "1"), response(s2c, `"1"`)},
			want: []passed{
				{c2s, call(`"1"`).raw, `send the request on with id "1" instead of 1; an answer with id "1" goes back to the client as 1`},
				{s2c, errorAnswer(s2c, "1").raw, ""},
				{s2c, response(s2c, "1").raw, `id "1" translated back to 1, the id the client gave the request that fault id-type#1 rewrote`},
			},
		},
		{
			name:   "a string holding an integer becomes that integer",
			specs:  []string{"id-type"},
			frames: []frame{call(`"7"`), response(s2c, "7")},
			want: []passed{
				{c2s, call("7").raw, `send the request on with id 7 instead of "7"; an answer with id 7 goes back to the client as "7"`},
				{s2c, response(s2c, `"7"`).raw, `id 7 translated back to "7", the id the client gave the request that fault id-type#1 rewrote`},
			},
		},
		{
			// The number is pinned: it is a function of the seed, and a
			// replay must draw the same one.
			name:   "a string holding an integer in flight gets a drawn number instead",
			specs:  []string{"id-type:nth=2"},
			frames: []frame{call("7"), call(`"7"`)},
			want: []passed{
				{c2s, call("7").raw, ""},
				{c2s, call("6449973").raw, `send the request on with id 6449973 instead of "7"; an answer with id 6449973 goes back to the client as "7"`},
			},
		},
		{
			name:   "to=string skips a string id, and the fault moves on to the next request",
			specs:  []string{"id-type:to=string"},
			frames: []frame{call(`"a"`), call("2")},
			want: []passed{
				{c2s, call(`"a"`).raw, `skipped: the id "a" is a string already`},
				{c2s, call(`"2"`).raw, `send the request on with id "2" instead of 2; an answer with id "2" goes back to the client as 2`},
			},
		},
		{
			name:   "to=number skips a number id",
			specs:  []string{"id-type:to=number"},
			frames: []frame{call("2")},
			want:   []passed{{c2s, call("2").raw, `skipped: the id 2 is a number already`}},
		},
		{
			name:   "no rewrite onto an id the receiver holds already",
			specs:  []string{"id-type:nth=2"},
			frames: []frame{call(`"1"`), call("1")},
			want: []passed{
				{c2s, call(`"1"`).raw, ""},
				{c2s, call("1").raw, `skipped: the server holds a request with id "1" already, rewriting 1 to it would be a collision`},
			},
		},
		{
			name:   "a notification has no id",
			specs:  []string{"id-type:on=c2s:*"},
			frames: []frame{notif(c2s, "notifications/initialized")},
			want:   []passed{{c2s, notif(c2s, "notifications/initialized").raw, "skipped: not a request, so there is no id to rewrite"}},
		},
		{
			name:   "a cancellation names the request by the id its receiver got",
			specs:  []string{"id-type"},
			frames: []frame{call("1"), cancelled("1"), cancelled("9")},
			want: []passed{
				{c2s, call(`"1"`).raw, `send the request on with id "1" instead of 1; an answer with id "1" goes back to the client as 1`},
				{c2s, cancelled(`"1"`).raw, `requestId 1 translated to "1", the id the server got the request under from fault id-type#1`},
				{c2s, cancelled("9").raw, ""},
			},
		},
		{
			name:   "server requests: the client's answer goes back to the server",
			specs:  []string{"id-type:on=s2c:request"},
			frames: []frame{request(s2c, "0", "roots/list", ""), response(c2s, `"0"`)},
			want: []passed{
				{s2c, request(s2c, `"0"`, "roots/list", "").raw, `send the request on with id "0" instead of 0; an answer with id "0" goes back to the server as 0`},
				{c2s, response(c2s, "0").raw, `id "0" translated back to 0, the id the server gave the request that fault id-type#1 rewrote`},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := relayIDs(t, 42, tc.specs, tc.frames)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("frames as forwarded (-want +got):\n%s", diff)
			}
		})
	}
}

// A string id that holds no integer becomes a number drawn from the seed:
// the same seed gives the same number, and it is never one in flight.
func TestIDTypeStringBecomesADrawnNumber(t *testing.T) {
	frames := []frame{request(c2s, `"abc"`, "tools/call", ""), response(s2c, "1")}
	numberFor := func(seed uint64) string {
		got, _ := relayIDs(t, seed, []string{"id-type"}, frames)
		return wire.Classify([]byte(got[0].Raw)).ID
	}
	a, b := numberFor(1), numberFor(1)
	if a != b || a[0] == '"' {
		t.Fatalf("seed 1 gave ids %s and %s; want one number, twice", a, b)
	}
	if c := numberFor(2); c == a {
		t.Errorf("seeds 1 and 2 both gave %s", a)
	}
	got, p := relayIDs(t, 1, []string{"id-type"}, append(frames, response(s2c, a)))
	if want := response(s2c, `"abc"`).raw; got[2].Raw != want {
		t.Errorf("the answer with id %s went on as %q; want %q", a, got[2].Raw, want)
	}
	if n := len(p.inflight.sent(c2s)); n != 0 {
		t.Errorf("%d requests still in flight after the answer", n)
	}
}

func TestIDCollision(t *testing.T) {
	call := func(id string) frame { return request(c2s, id, "tools/call", "") }
	const collide2 = "send the request on with id 1 (was 2), the id of the tools/call request still in flight; the first answer with id 1 goes back as 1, the next as 2"
	tests := []struct {
		name   string
		specs  []string
		frames []frame
		want   []passed
	}{
		{
			name:   "the first answer goes to the request in flight first, the second back to the colliding one",
			specs:  []string{"id-collision"},
			frames: []frame{call("1"), call("2"), errorAnswer(s2c, "1"), response(s2c, "1"), response(s2c, "1")},
			want: []passed{
				{c2s, call("1").raw, "skipped: no other request the client sent is in flight to collide with"},
				{c2s, call("1").raw, collide2},
				{s2c, errorAnswer(s2c, "1").raw, ""},
				{s2c, response(s2c, "2").raw, "id 1 translated back to 2, the id the client gave the request that fault id-collision#1 rewrote"},
				{s2c, response(s2c, "1").raw, ""}, // a third answer is the receiver's problem
			},
		},
		{
			name:   "one rewrite per request: a later id fault skips it",
			specs:  []string{"id-type:nth=2", "id-collision"},
			frames: []frame{call("1"), call("2")},
			want: []passed{
				{c2s, call("1").raw, "skipped: no other request the client sent is in flight to collide with"},
				{c2s, call(`"2"`).raw, `skipped: an earlier fault sends this request on with id "2" already`},
			},
		},
		{
			name:   "a cancellation of a collided request keeps its sender's id: the receiver could not tell which to cancel",
			specs:  []string{"id-collision"},
			frames: []frame{call("1"), call("2"), cancelled("2")},
			want: []passed{
				{c2s, call("1").raw, "skipped: no other request the client sent is in flight to collide with"},
				{c2s, call("1").raw, collide2},
				{c2s, cancelled("2").raw, ""},
			},
		},
		{
			name:   "requests the other way do not count",
			specs:  []string{"id-collision"},
			frames: []frame{request(s2c, "1", "roots/list", ""), call("2")},
			want: []passed{
				{s2c, request(s2c, "1", "roots/list", "").raw, ""},
				{c2s, call("2").raw, "skipped: no other request the client sent is in flight to collide with"},
			},
		},
		{
			name:   "an id rewritten by id-type is the one the receiver holds",
			specs:  []string{"id-type:nth=1", "id-collision:nth=2"},
			frames: []frame{call("1"), call("2"), response(s2c, `"1"`), response(s2c, `"1"`)},
			want: []passed{
				{c2s, call(`"1"`).raw, `send the request on with id "1" instead of 1; an answer with id "1" goes back to the client as 1`},
				{c2s, call(`"1"`).raw, `send the request on with id "1" (was 2), the id of the tools/call request still in flight; the first answer with id "1" goes back as 1, the next as 2`},
				{s2c, response(s2c, "1").raw, `id "1" translated back to 1, the id the client gave the request that fault id-type#1 rewrote`},
				{s2c, response(s2c, "2").raw, `id "1" translated back to 2, the id the client gave the request that fault id-collision#1 rewrote`},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := relayIDs(t, 42, tc.specs, tc.frames)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("frames as forwarded (-want +got):\n%s", diff)
			}
		})
	}
}

// with=random picks among the requests in flight with the seed's draws; the
// in-flight table sees the sender's ids throughout.
func TestIDCollisionRandom(t *testing.T) {
	call := func(id string) frame { return request(c2s, id, "tools/call", "") }
	frames := []frame{call("1"), call("2"), call("3"), call("4")}
	picks := map[string]bool{}
	for seed := range uint64(40) {
		got, p := relayIDs(t, seed, []string{"id-collision:nth=4,with=random"}, frames)
		again, _ := relayIDs(t, seed, []string{"id-collision:nth=4,with=random"}, frames)
		if got[3] != again[3] {
			t.Fatalf("seed %d: %q then %q", seed, got[3].Raw, again[3].Raw)
		}
		id := wire.Classify([]byte(got[3].Raw)).ID
		if id != "1" && id != "2" && id != "3" {
			t.Fatalf("seed %d: collided onto %s; want an id in flight", seed, id)
		}
		picks[id] = true
		var inFlight []string
		for _, r := range p.inflight.sent(c2s) {
			inFlight = append(inFlight, r.ID)
		}
		if diff := cmp.Diff([]string{"1", "2", "3", "4"}, inFlight); diff != "" {
			t.Fatalf("seed %d: in flight (-want +got):\n%s", seed, diff)
		}
	}
	if len(picks) != 3 {
		t.Errorf("40 seeds picked %v; want each of the 3 ids in flight at least once", picks)
	}
}

// cancelled is the client cancelling the request with id (JSON text).
func cancelled(id string) frame {
	return frame{c2s, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"user"}}` + "\n"}
}

// TestIDFaultsEndToEnd relays random traffic both ways through id faults
// firing at random, between two correct peers that answer what they hold in
// any order with the id they got. Under id-type alone every answer reaches
// the sender with the id of the request it answers; with collisions, which
// answer goes where follows the arrival rule, but every request still gets
// exactly one answer. Once all is answered the plan holds nothing.
func TestIDFaultsEndToEnd(t *testing.T) {
	plans := map[string][]string{
		"id-type":      {"id-type:on=*,times=0,p=0.5"},
		"both, random": {"id-type:on=*,times=0,p=0.3", "id-collision:on=*,times=0,p=0.3,with=random"},
	}
	for name, specs := range plans {
		t.Run(name, func(t *testing.T) {
			exact := len(specs) == 1
			r := rand.New(rand.NewPCG(3, 4))
			fired := 0
			for round := range 40 {
				p := NewPlan(r.Uint64(), mustParse(t, specs...))
				relay := func(f frame) string {
					m := classify(t, f)
					step := p.Receive(f.dir, &m)
					out := f.raw
					if step.Rewritten != nil {
						out = string(step.Rewritten)
					}
					for _, fi := range p.Decide(Before, step) {
						if fi.Effect.Rewrite != nil {
							out = string(fi.Effect.Rewrite)
							fired++
						}
					}
					return out
				}
				type held struct{ wire, orig string }
				holds := map[wire.Direction][]held{}
				awaiting := map[wire.Direction]map[string]int{c2s: {}, s2c: {}}
				next := 0
				answer := func(dir wire.Direction) {
					i := r.IntN(len(holds[dir]))
					h := holds[dir][i]
					holds[dir] = append(holds[dir][:i:i], holds[dir][i+1:]...)
					got := wire.Classify([]byte(relay(response(dir.Reverse(), h.wire)))).ID
					switch {
					case exact && got != h.orig:
						t.Fatalf("round %d: the answer to %s (sent on as %s) reached the %s as %s", round, h.orig, h.wire, sender(dir), got)
					case awaiting[dir][got] == 0:
						t.Fatalf("round %d: the %s got an answer with id %s, which it does not await", round, sender(dir), got)
					}
					awaiting[dir][got]--
				}
				for range 200 {
					dir := []wire.Direction{c2s, s2c}[r.IntN(2)]
					if len(holds[dir]) > 0 && r.IntN(2) == 0 {
						answer(dir)
						continue
					}
					next++
					id := strconv.Itoa(next)
					if r.IntN(3) == 0 {
						id = strconv.Quote("s-" + id)
					}
					got := wire.Classify([]byte(relay(request(dir, id, "tools/call", "")))).ID
					holds[dir] = append(holds[dir], held{wire: got, orig: id})
					awaiting[dir][id]++
				}
				for _, dir := range []wire.Direction{c2s, s2c} {
					for len(holds[dir]) > 0 {
						answer(dir)
					}
					if n := len(p.inflight.sent(dir)); n != 0 {
						t.Fatalf("round %d: %d requests %s still in flight in the plan after every answer", round, n, dir)
					}
					if n := len(p.ids[dir]); n != 0 {
						t.Fatalf("round %d: the plan still maps %d ids %s after every answer", round, n, dir)
					}
				}
			}
			if fired < 100 {
				t.Errorf("only %d rewrites over all rounds; the property is close to vacuous", fired)
			}
		})
	}
}
