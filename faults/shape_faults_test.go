package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/wire"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"0": 0, "4096": 4096, "512B": 512, "64KiB": 64 << 10, "1MiB": 1 << 20,
		"16MiB": 16 << 20, "2GiB": 2 << 30, "1 MiB": 1 << 20,
	}
	for in, want := range good {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "1MB", "1KB", "-1", "1.5MiB", "1mib", "12x", "99999999999GiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d; want an error", in, got)
		}
	}
}

// TestShapeFaultsParse checks the defaults, the default on= patterns and the
// parameter checks of reorder, fragment, throttle and oversize.
func TestShapeFaultsParse(t *testing.T) {
	tests := []struct {
		spec  string
		want  Action
		on    string
		phase Phase
	}{
		{"reorder", reorder{mode: "swap", max: time.Second}, "", Before},
		{"reorder:mode=swap,max=2s", reorder{mode: "swap", max: 2 * time.Second}, "", Before},
		{"reorder:mode=response-first", reorder{mode: "response-first", max: time.Second}, "s2c:notification:notifications/progress", Before},
		{"reorder:mode=response-first,on=c2s:notification", reorder{mode: "response-first", max: time.Second}, "c2s:notification", Before},
		{"reorder:mode=late-progress", reorder{mode: "late-progress", max: time.Second}, "s2c:response", Before},
		{"reorder:mode=late-progress,position=after", reorder{mode: "late-progress", max: time.Second}, "s2c:response", After},
		{"fragment", fragment{pieces: 3, gap: 10 * time.Millisecond}, "", Before},
		{"fragment:pieces=7,gap=0s", fragment{pieces: 7}, "", Before},
		{"throttle", throttle{rate: 4096}, "", Before},
		{"throttle:rate=64KiB,for=3s,dir=s2c", throttle{rate: 64 << 10, d: 3 * time.Second, dir: s2c}, "", Before},
		{"throttle:rate=100000", throttle{rate: 100000}, "", Before},
		{"oversize", oversize{size: 1 << 20}, "", Before},
		{"oversize:size=64MiB", oversize{size: 64 << 20}, "", Before},
	}
	for _, tc := range tests {
		f := mustParse(t, tc.spec)[0]
		if diff := cmp.Diff(tc.want, f.Action, cmpOpts); diff != "" {
			t.Errorf("%s: action (-want +got):\n%s", tc.spec, diff)
		}
		on, _ := ParsePattern(tc.on)
		if diff := cmp.Diff(on, f.Trigger.On, cmpOpts); diff != "" {
			t.Errorf("%s: on (-want +got):\n%s", tc.spec, diff)
		}
		if f.Trigger.Phase != tc.phase {
			t.Errorf("%s: phase %v; want %v", tc.spec, f.Trigger.Phase, tc.phase)
		}
	}
	bad := []struct{ spec, want string }{
		{"reorder:mode=random", `"random" is not one of swap, response-first, late-progress`},
		{"reorder:position=after", "position: after is not possible"},
		{"reorder:mode=response-first,position=after", "position: after is not possible"},
		{"reorder:max=0s", "max: must be more than 0"},
		{"fragment:pieces=1", "pieces: must be between 2 and 10000"},
		{"fragment:pieces=10001", "pieces: must be between 2 and 10000"},
		{"fragment:position=after", "position: after is not possible"},
		{"fragment:gap=soon", "not a duration"},
		{"throttle:rate=10", "rate: must be at least 64 bytes per second"},
		{"throttle:rate=1MB", `"1MB" is not a size like 4096, 64KiB or 1MiB`},
		{"throttle:for=0s", "not a duration like 250ms, 5s or forever"},
		{"throttle:dir=up", "up"},
		{"oversize:size=0", "size: must be between 1 byte and 64MiB"},
		{"oversize:size=65MiB", "size: must be between 1 byte and 64MiB"},
		{"oversize:position=after", "position: after is not possible"},
	}
	for _, tc := range bad {
		_, err := Parse(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

func TestShapeFaultsEffects(t *testing.T) {
	call := request(c2s, "7", "tools/call", `"tok"`)
	plain := request(c2s, "8", "tools/call", "")
	prog := progress(s2c, `"tok"`)
	tiny := notif(c2s, "a") // a 30-byte body
	all := make([]int, 30)
	for i := range all {
		all[i] = i + 1
	}
	tests := []struct {
		spec   string
		frames []frame
		want   []decision
	}{
		{"reorder:on=c2s:request", []frame{call}, []decision{{At: 1, Phase: Before, Effect: Effect{
			Hold: &Hold{Until: UntilNext, Max: time.Second}, Detail: "hold the message until the next c2s message has been forwarded (at most 1s)"}}}},
		{"reorder:mode=response-first,max=3s", []frame{call, prog, prog}, []decision{{At: 2, Phase: Before, Effect: Effect{
			Hold:   &Hold{Until: UntilAnswer, AnswerID: "7", Token: `"tok"`, Max: 3 * time.Second},
			Detail: `hold progress for token "tok", and later progress for it, until the answer to tools/call 7 has been forwarded (at most 3s)`}}}},
		// Progress for a token no open request carries: nothing to wait for.
		{"reorder:mode=response-first", []frame{plain, prog}, []decision{{At: 2, Phase: Before, Effect: Effect{
			Skipped: true, Detail: `skipped: no unanswered request to the server carries progress token "tok"`}}}},
		{"reorder:mode=response-first,on=*", []frame{call}, []decision{{At: 1, Phase: Before, Effect: Effect{
			Skipped: true, Detail: "skipped: not a notifications/progress with a progress token"}}}},
		{"reorder:mode=late-progress", []frame{call, response(s2c, "7")}, []decision{{At: 2, Phase: Before, Effect: Effect{
			InjectAfter: []Injection{{Dir: s2c, Raw: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":1,"message":"mcpchaos late progress"}}` + "\n")}},
			Detail:      `inject notifications/progress for token "tok" right after the answer to tools/call 7`}}}},
		{"reorder:mode=late-progress", []frame{plain, response(s2c, "8")}, []decision{{At: 2, Phase: Before, Effect: Effect{
			Skipped: true, Detail: "skipped: the request this answers carried no progress token"}}}},
		{"reorder:mode=late-progress,on=*", []frame{plain}, []decision{{At: 1, Phase: Before, Effect: Effect{
			Skipped: true, Detail: "skipped: not an answer to a request"}}}},
		{"throttle:on=c2s", []frame{call}, []decision{{At: 1, Phase: Before, Effect: Effect{
			Throttle: &Throttle{Dir: c2s, Rate: 4096}, Detail: "pace frames toward the server to 4096 bytes per second for the rest of the session"}}}},
		{"throttle:on=c2s,dir=s2c,rate=1MiB,for=2s", []frame{call}, []decision{{At: 1, Phase: Before, Effect: Effect{
			Throttle: &Throttle{Dir: s2c, Rate: 1 << 20, For: 2 * time.Second}, Detail: "pace frames toward the client to 1048576 bytes per second for 2s"}}}},
		{"fragment:on=c2s,pieces=2", []frame{tiny}, []decision{{At: 1, Phase: Before, Effect: Effect{
			Fragment: &Fragment{Cuts: []int{cutOf(t, "fragment:on=c2s,pieces=2", tiny)}, Gap: 10 * time.Millisecond},
			Detail:   fmt.Sprintf("write the message in 2 pieces, cut after bytes [%d], 10ms apart", cutOf(t, "fragment:on=c2s,pieces=2", tiny))}}}},
		// A 30-byte body gives at most 30 cuts, so 31 pieces.
		{"fragment:on=c2s,pieces=99,gap=1ms", []frame{tiny}, []decision{{At: 1, Phase: Before, Effect: Effect{
			Fragment: &Fragment{Cuts: all, Gap: time.Millisecond}, Detail: fmt.Sprintf("write the message in 31 pieces, cut after bytes %v, 1ms apart", all)}}}},
		{"oversize:on=s2c,size=64KiB", []frame{call, errorAnswer(s2c, "7")}, []decision{{At: 2, Phase: Before, Effect: Effect{
			Skipped: true, Detail: "skipped: a error has no params or result to pad"}}}},
		{"oversize:on=c2s,size=10", []frame{call}, []decision{{At: 1, Phase: Before, Effect: Effect{
			Skipped: true, Detail: fmt.Sprintf("skipped: the message is %d bytes already, not smaller than 10", len(call.raw))}}}},
	}
	for _, tc := range tests {
		got := runPlan(t, 1, []string{tc.spec}, tc.frames)
		for i := range tc.want {
			tc.want[i].Label, tc.want[i].Spec = strings.SplitN(tc.spec, ":", 2)[0]+"#1", tc.spec
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: decisions (-want +got):\n%s", tc.spec, diff)
		}
	}
}

// cutOf returns the single cut a two-piece fragment draws for f.
func cutOf(t *testing.T, spec string, f frame) int {
	ds := runPlan(t, 1, []string{spec}, []frame{f})
	if len(ds) != 1 || ds[0].Effect.Fragment == nil || len(ds[0].Effect.Fragment.Cuts) != 1 {
		t.Fatalf("%s on %q decided %v", spec, f.raw, ds)
	}
	return ds[0].Effect.Fragment.Cuts[0]
}

// TestFragmentCuts: the cuts are distinct, ascending, inside the body (so
// the line ending travels in the last piece), as many as asked when the
// frame is long enough, and each piece holds at least one byte.
func TestFragmentCuts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		pieces := 2 + r.IntN(40)
		body := strings.Repeat("a", 1+r.IntN(60))
		end := []string{"\n", "\r\n", ""}[r.IntN(3)]
		m := wire.Message{Raw: []byte(body + end)}
		e := fragment{pieces: pieces}.Fire(&FireContext{Message: &m, Draws: newDraws(r.Uint64(), 1, c2s, 1)})
		limit := len(body)
		if end == "" {
			limit--
		}
		if limit == 0 {
			if !e.Skipped {
				t.Errorf("a %d-byte frame without ending was cut: %+v", len(m.Raw), e)
			}
			continue
		}
		cuts := e.Fragment.Cuts
		if want := min(pieces-1, limit); len(cuts) != want {
			t.Fatalf("%d pieces of %q: %d cuts %v; want %d", pieces, m.Raw, len(cuts), cuts, want)
		}
		prev := 0
		for _, c := range cuts {
			if c <= prev || c > limit {
				t.Fatalf("%d pieces of %q: cuts %v are not ascending within [1, %d]", pieces, m.Raw, cuts, limit)
			}
			prev = c
		}
	}
}

// TestOversizeStaysValid: the grown frame is exactly the size asked, still
// the same JSON-RPC message (kind, id, method, progress token), with every
// member it had unchanged and the padding under _meta.
func TestOversizeStaysValid(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"<&>"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"t","other":[1, 2]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"mcpchaos-padding-marker"}],"_meta":{"k":"v"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"m","params":null}`,
	}
	for _, raw := range frames {
		for _, size := range []int64{200, 4096, 1 << 20} {
			m := wire.Classify([]byte(raw + "\n"))
			e := oversize{size: size}.Fire(&FireContext{Message: &m})
			if e.Skipped {
				t.Errorf("%s: skipped: %s", raw, e.Detail)
				continue
			}
			if int64(len(e.Replace)) != size || !bytes.HasSuffix(e.Replace, []byte("\n")) || bytes.Count(e.Replace, []byte("\n")) != 1 {
				t.Errorf("%s to %d: got %d bytes (one line wanted)", raw, size, len(e.Replace))
			}
			g := wire.Classify(e.Replace)
			if g.Kind != m.Kind || g.ID != m.ID || g.Method != m.Method || g.ProgressToken != m.ProgressToken || g.Problem != "" {
				t.Errorf("%s grown classifies as %+v; want %+v", raw, withoutRaw(g), withoutRaw(m))
			}
			want, got := decodeAll(t, []byte(raw)), decodeAll(t, e.Replace)
			member := "params"
			if m.Kind == wire.Response {
				member = "result"
			}
			inner, _ := got[member].(map[string]any)
			meta, _ := inner["_meta"].(map[string]any)
			pad, _ := meta[PaddingKey].(string)
			if strings.Trim(pad, "x") != "" {
				t.Errorf("%s: padding %.20q is not x's", raw, pad)
			}
			delete(meta, PaddingKey)
			if len(meta) == 0 {
				delete(inner, "_meta")
			}
			if len(inner) == 0 && want[member] == nil {
				// An absent or null member became the object holding _meta.
				delete(got, member)
				delete(want, member)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: members changed by growing (-want +got):\n%s", raw, diff)
			}
		}
	}
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`,
		`not json`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}`,
		`{"jsonrpc":"2.0","id":1,"result":"text"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":3}}`,
	} {
		m := wire.Classify([]byte(raw + "\n"))
		if e := (oversize{size: 4096}).Fire(&FireContext{Message: &m}); !e.Skipped || !strings.HasPrefix(e.Detail, "skipped: ") || e.Replace != nil {
			t.Errorf("%s: %+v; want skipped with a reason", raw, e)
		}
	}
}

func withoutRaw(m wire.Message) wire.Message { m.Raw = nil; return m }

func decodeAll(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%.80s: %v", b, err)
	}
	return v
}

// shapeSpecs draw (fragment cuts, p) or depend on the traffic (reorder's
// token and answer matching).
var shapeSpecs = []string{
	"fragment:pieces=5,times=0,p=0.5",
	"fragment:on=s2c:response,pieces=40,times=0",
	"reorder:p=0.3,times=0",
	"reorder:mode=response-first,times=0",
	"reorder:mode=late-progress,times=0,p=0.7",
	"throttle:rate=1MiB,p=0.1,times=0",
	"oversize:on=c2s:request,size=4KiB,p=0.5,times=0",
}

// TestShapeDeterminism: the same seed and the same traffic give the same
// decisions, cut points included; another seed cuts elsewhere.
func TestShapeDeterminism(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 11))
	total := 0
	for i := range 200 {
		frames := genFrames(r, 1+r.IntN(200))
		seed := r.Uint64()
		first := runPlan(t, seed, shapeSpecs, frames)
		second := runPlan(t, seed, shapeSpecs, frames)
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("case %d, seed %d: the same traffic decided differently (-first +second):\n%s", i, seed, cmp.Diff(first, second))
		}
		total += len(first)
	}
	if total < 1000 {
		t.Errorf("only %d decisions over all cases; the property is close to vacuous", total)
	}
	cuts := func(seed uint64) [][]int {
		var out [][]int
		for _, d := range runPlan(t, seed, []string{"fragment:pieces=4,times=0"}, pingPong(20)) {
			out = append(out, d.Effect.Fragment.Cuts)
		}
		return out
	}
	if a, b := cuts(1), cuts(2); cmp.Equal(a, b) {
		t.Errorf("seeds 1 and 2 cut at the same points %v", a)
	}
	if diff := cmp.Diff(cuts(7), cuts(7)); diff != "" {
		t.Errorf("seed 7 cut differently twice (-first +second):\n%s", diff)
	}
}

// TestShapeFaultsKeepOthersDecisions: adding the shaping faults to a plan
// does not change another fault's decisions, nor theirs others'.
func TestShapeFaultsKeepOthersDecisions(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 30 {
		frames := genFrames(r, 200)
		seed := r.Uint64()
		for _, target := range append([]string{"eof:p=0.4,times=0"}, shapeSpecs...) {
			others := append(append([]string{}, mixedSpecs...), shapeSpecs...)
			others = slices.DeleteFunc(others, func(s string) bool { return s == target })
			alone := decisionsOf(runPlan(t, seed, []string{target}, frames), target)
			with := decisionsOf(runPlan(t, seed, append(others, target), frames), target)
			if !reflect.DeepEqual(alone, with) {
				t.Fatalf("%s changed with other faults (-alone +with):\n%s", target, cmp.Diff(alone, with))
			}
		}
	}
}
