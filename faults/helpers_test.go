package faults

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Shorthands for the two directions.
const (
	c2s = wire.ToServer
	s2c = wire.ToClient
)

// frame is one message as it travels: its direction and its bytes.
type frame struct {
	dir wire.Direction
	raw string
}

func (f frame) String() string { return f.dir.String() + " " + f.raw }

// request builds a JSON-RPC request. id is JSON text (`1`, `"a"`); token, when
// not empty, is the JSON text of params._meta.progressToken.
func request(dir wire.Direction, id, method, token string) frame {
	params := `{}`
	if token != "" {
		params = `{"_meta":{"progressToken":` + token + `}}`
	}
	return frame{dir, `{"jsonrpc":"2.0","id":` + id + `,"method":` + strconv.Quote(method) + `,"params":` + params + `}` + "\n"}
}

func response(dir wire.Direction, id string) frame {
	return frame{dir, `{"jsonrpc":"2.0","id":` + id + `,"result":{}}` + "\n"}
}

func errorAnswer(dir wire.Direction, id string) frame {
	return frame{dir, `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"boom"}}` + "\n"}
}

func notif(dir wire.Direction, method string) frame {
	return frame{dir, `{"jsonrpc":"2.0","method":` + strconv.Quote(method) + `}` + "\n"}
}

func progress(dir wire.Direction, token string) frame {
	return frame{dir, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + token + `,"progress":1}}` + "\n"}
}

func garbage(dir wire.Direction) frame { return frame{dir, "not json\n"} }

// classify turns f into a wire.Message and checks that builders produce what
// they mean to: only garbage may be invalid.
func classify(t testing.TB, f frame) wire.Message {
	t.Helper()
	m := wire.Classify([]byte(f.raw))
	if m.Kind == wire.Invalid && f.raw != "not json\n" {
		t.Fatalf("test frame %q is invalid: %s", f.raw, m.Problem)
	}
	return m
}

// decision is one firing as a test sees it: the 1-based position of the
// message in the sequence, the phase it fired in, and what the fault decided.
type decision struct {
	At     int
	Phase  Phase
	Label  string
	Spec   string
	Effect Effect
}

func (d decision) String() string { return fmt.Sprintf("#%d %s %s", d.At, d.Phase, d.Label) }

// mustParse parses every spec or fails the test.
func mustParse(t testing.TB, specs ...string) []*Fault {
	t.Helper()
	var fs []*Fault
	for _, s := range specs {
		f, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		fs = append(fs, f)
	}
	return fs
}

// runPlan feeds frames through a new plan of the specs, as the relay does:
// Receive, Decide(Before), forward, Decide(After).
func runPlan(t testing.TB, seed uint64, specs []string, frames []frame) []decision {
	t.Helper()
	return runFaults(t, NewPlan(seed, mustParse(t, specs...)), frames)
}

func runFaults(t testing.TB, p *Plan, frames []frame) []decision {
	t.Helper()
	var out []decision
	for i, f := range frames {
		m := classify(t, f)
		step := p.Receive(f.dir, &m)
		for _, phase := range []Phase{Before, After} {
			for _, fi := range p.Decide(phase, step) {
				out = append(out, decision{At: i + 1, Phase: phase, Label: fi.Label, Spec: fi.Fault.Spec, Effect: fi.Effect})
			}
		}
	}
	return out
}

// firedAt lists the positions of the messages the fault with this label fired on.
func firedAt(ds []decision, label string) []int {
	out := []int{}
	for _, d := range ds {
		if d.Label == label {
			out = append(out, d.At)
		}
	}
	return out
}

// repeat returns n copies of f.
func repeat(f frame, n int) []frame {
	out := make([]frame, n)
	for i := range out {
		out[i] = f
	}
	return out
}

// cmpOpts compares the unexported action structs and patterns of this package.
var cmpOpts = cmp.Options{
	cmp.AllowUnexported(Pattern{}, stall{}, burst{}, eof{}, halfClose{}, delay{}, drop{}, duplicate{}, corrupt{},
		reorder{}, fragment{}, throttle{}, oversize{},
		serverRequest{}, cancel{}, cancelTask{}, listChanged{}, earlyRequest{}),
	cmp.AllowUnexported(signalFault{}, stderrFlood{}, linger{}),
	cmp.AllowUnexported(idType{}, idCollision{}, mutate{}),
	cmp.AllowUnexported(httpError{}, reset{}, endSession{}, forgetSession{}, holdHeaders{}, eventIDReuse{}, cutTarget{}, foreignOrigin{}, forgeOrigin{}, credentials{}),
}

// knownFaults is how a parse error lists the fault families.
var knownFaults = "(known: " + strings.Join(familyNames(), ", ") + "; see mcpchaos faults)"
