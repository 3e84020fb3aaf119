package probe

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// Growth series: the same request at growing input sizes, sent one at a
// time after the hostile workload, each marked with wire.MetaGrowth so that
// the judge can read how the answer time grows with the input. A server
// whose cost grows faster than its input (a URI template matched by a
// regular expression that backtracks, a string handled in quadratic time)
// answers the small steps at once and the large ones late or never: one
// request of a few kilobytes ties it up for minutes, and every client with
// it.
//
// A series stops at the first step that took longer than growthBudget (the
// next would cost many times more) or went unanswered; a step that took
// longer than growthRepeat is sent again, and the judge takes the faster of
// the two, so that one pause of the server's runtime, or one slow lookup of
// a tool that reaches the network, is not a trend.
//
// growthRepeat is the judge's floor (judge.InputCost): a faster step cannot
// be the finding, and is not worth a second look.
const (
	growthBudget = time.Second
	growthRepeat = 250 * time.Millisecond
	// A step of growthJump or more, growthJumps times the step before,
	// ends its series too: the judge has its finding (judge.InputCost).
	growthJump  = 250 * time.Millisecond
	growthJumps = 4
)

// templateItems are the list items per variable of a template series'
// steps: a matcher that backtracks over them doubles its work with each
// item, so the steps grow by a few at a time.
var templateItems = []int{4, 8, 12, 16, 20, 24, 28, 32}

// stringSizes are a tool's string argument's lengths in a string series,
// under the 64 KiB of a line read with bufio.Scanner's default buffer.
var stringSizes = []int{1 << 10, 4 << 10, 16 << 10, 60 << 10}

type growthStep struct {
	req  hostileRequest
	size int
}

type growthSeries struct {
	name  string
	steps []growthStep
}

// growthWork plans the series of a session: a near miss of the first
// listed resource template with a variable, with more list items each step,
// and the first callable tool's string argument, longer each step.
func (s *session) growthWork(tools []listedTool, sf *surface) []growthSeries {
	if s.cfg.Hostile == "" {
		return nil
	}
	params := func(fields map[string]any, series string, step, size int) json.RawMessage {
		meta := map[string]any{wire.MetaGrowth: map[string]any{"series": series, "step": step, "size": size}}
		b, err := json.Marshal(s.params(fields, meta, s.stateless()))
		if err != nil {
			return json.RawMessage("{}")
		}
		return b
	}
	var out []growthSeries
	for _, tpl := range sf.templates {
		if !strings.Contains(tpl, "{") {
			continue
		}
		g := growthSeries{name: "resources/read " + tpl}
		for i, n := range templateItems {
			uri := nearMissExpansion(tpl, n)
			g.steps = append(g.steps, growthStep{size: len(uri), req: hostileRequest{
				method: "resources/read", growth: true,
				params: params(map[string]any{"uri": uri}, g.name, i, len(uri)),
				what:   "resources/read of a near miss of the template " + tpl + " with " + strconv.Itoa(n) + " list items",
			}})
		}
		out = append(out, g)
		break
	}
	for _, t := range tools {
		_, explicit := s.explicitCall(t.Name)
		if t.taskOnly() || slices.Contains(s.cfg.SkipTools, t.Name) || s.cfg.Calls != nil && !explicit {
			continue
		}
		name, ok := stringProperty(t.InputSchema)
		if !ok {
			continue
		}
		g := growthSeries{name: "tools/call " + t.Name + " " + name}
		for i, n := range stringSizes {
			args := objectOf(s.callArgs(t))
			args[name] = strings.Repeat("m", n)
			g.steps = append(g.steps, growthStep{size: n, req: hostileRequest{
				method: "tools/call", tool: t.Name, growth: true,
				params: params(map[string]any{"name": t.Name, "arguments": args}, g.name, i, n),
				what:   "a string argument of " + sizeWords(n) + "",
			}})
		}
		out = append(out, g)
		break
	}
	return out
}

// nearMissExpansion expands tpl (RFC 6570) with a list of n items for each
// variable, its commas as a list's, and ends the URI with a "/" no
// expansion of the template has there: a matcher must try the items'
// every split before it can say no.
func nearMissExpansion(tpl string, n int) string {
	items := strings.TrimSuffix(strings.Repeat("a,", n), ",")
	return expand(tpl, func(string) string { return items }, false) + "/"
}

// growth sends each series, a step at a time, after the hostile workload;
// it sends nothing once a request went unanswered.
func (s *session) growth(series []growthSeries) {
	s.oneByOne.Store(true)
	for _, g := range series {
		var prev time.Duration
		for _, step := range g.steps {
			took, ok, _ := s.sendHostile(step.req)
			if ok && took >= growthRepeat {
				again, answered, _ := s.sendHostile(step.req)
				took, ok = min(took, again), answered
			}
			// A step that jumped (the judge's finding already) is not
			// followed by one that would jump again, past the deadline.
			jumped := took >= growthJump && took >= growthJumps*max(prev, time.Millisecond)
			if !ok || took >= growthBudget || jumped {
				break
			}
			prev = took
		}
	}
}
