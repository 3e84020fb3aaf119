package judge

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// InputCost reads the growth series the probe sends (the same request at
// growing input sizes, each marked with wire.MetaGrowth) and finds a server
// whose answer time grows faster than the input: a URI template matched by
// a backtracking regular expression (CVE-2026-0621), a string handled in
// quadratic time. Such a server answers the small steps at once and ties
// itself up for minutes over a request of a few kilobytes.
var InputCost = &Checker{
	Name:  "input-cost",
	Doc:   "the answer time of the probe's growth series against the growth of its input",
	Reads: []string{wire.EventReceived},
	Rules: []string{reports.RuleCostGrowsWithInput},
	New:   func() Check { return &inputCost{open: map[string]growthSent{}} },
}

// What makes a step's answer time a finding: it took at least costFloor
// (below it, a machine's noise is larger than any trend), at least
// costJump times the step before, and its growth exponent against the
// input's (log of the time's ratio over log of the size's) is at least
// costExponent: quadratic or worse; and the step before had grown already,
// to at least costTrendUS and twice the one before it. A cost that grows
// with the input grows at every step; one slow answer after flat ones is a
// tool's network call or a pause (notion-mcp-server's lookup of its API's
// host, 3 ms, 3 ms, 3 ms, then 5 s, on a machine without DNS). A step
// unanswered after one whose time had already jumped so is a finding too:
// the deadline passed.
const (
	costFloorUS  = 250_000
	costJump     = 4
	costExponent = 2
	// costMinUS is the least time a step is taken to have cost: a few
	// microseconds of a tiny answer are not a base to multiply.
	costMinUS   = 1_000
	costTrendUS = 5_000
	// maxSeries bounds the series kept, maxSteps their steps.
	maxSeries = 16
	maxSteps  = 64
)

type growthSent struct {
	id, series string
	step, size int
	t          int64
	ev         reports.Evidence
}

type growthPoint struct {
	size int
	// best is the fastest answer's time, in µs; answered says one came.
	best     int64
	answered bool
	// id is the fastest answer's request's.
	id       string
	req, ans reports.Evidence
}

type growthRun struct {
	name  string
	steps map[int]*growthPoint
}

type inputCost struct {
	open   map[string]growthSent
	series []*growthRun
}

func (c *inputCost) Event(e *wire.Event) {
	switch {
	case e.Dir == "c2s" && e.Kind == "request":
		b, err := e.Bytes()
		if err != nil {
			return
		}
		raw := member(member(member(b, "params"), "_meta"), wire.MetaGrowth)
		if raw == nil {
			return
		}
		var m struct {
			Series     string `json:"series"`
			Step, Size int
		}
		if json.Unmarshal(raw, &m) != nil || m.Series == "" || m.Step < 0 || m.Step >= maxSteps || len(c.open) >= maxOpenAsked {
			return
		}
		run := c.run(m.Series)
		if run == nil {
			return
		}
		if run.steps[m.Step] == nil {
			run.steps[m.Step] = &growthPoint{size: m.Size, id: e.ID, req: evidenceOf(e)}
		}
		c.open[e.ID] = growthSent{id: e.ID, series: m.Series, step: m.Step, size: m.Size, t: e.T, ev: evidenceOf(e)}
	case e.Dir == "s2c" && (e.Kind == "response" || e.Kind == "error"):
		sent, ok := c.open[e.ID]
		if !ok {
			return
		}
		delete(c.open, e.ID)
		p := c.run(sent.series).steps[sent.step]
		if took := e.T - sent.t; !p.answered || took < p.best {
			p.best, p.answered, p.id, p.req, p.ans = took, true, sent.id, sent.ev, evidenceOf(e)
		}
	}
}

func (c *inputCost) run(name string) *growthRun {
	for _, r := range c.series {
		if r.name == name {
			return r
		}
	}
	if len(c.series) >= maxSeries {
		return nil
	}
	r := &growthRun{name: name, steps: map[int]*growthPoint{}}
	c.series = append(c.series, r)
	return r
}

func (c *inputCost) Findings() []reports.Finding {
	var out []reports.Finding
	for _, r := range c.series {
		if f, ok := r.finding(); ok {
			out = append(out, f)
		}
	}
	return out
}

// finding is the series' first step whose cost outgrew its input.
func (r *growthRun) finding() (reports.Finding, bool) {
	var pts []*growthPoint
	for _, i := range slices.Sorted(maps.Keys(r.steps)) {
		pts = append(pts, r.steps[i])
	}
	cost := func(p *growthPoint) int64 { return max(p.best, costMinUS) }
	for i := 1; i < len(pts); i++ {
		prev, p := pts[i-1], pts[i]
		if !prev.answered {
			break
		}
		switch {
		case p.answered && p.best >= costFloorUS && p.best >= costJump*cost(prev) && exponent(cost(prev), p.best, prev.size, p.size) >= costExponent &&
			i >= 2 && pts[i-2].answered && prev.best >= costTrendUS && prev.best >= 2*cost(pts[i-2]):
			return r.report(pts[:i+1], fmt.Sprintf("its time grew %.0f-fold for %.2f-fold the input", float64(p.best)/float64(cost(prev)), float64(p.size)/float64(max(prev.size, 1))), p), true
		case !p.answered && i >= 2 && pts[i-2].answered && prev.best >= 10_000 && prev.best >= costJump*cost(pts[i-2]):
			return r.report(pts[:i+1], "the step after one whose time had jumped "+fmt.Sprintf("%.0f-fold", float64(prev.best)/float64(cost(pts[i-2])))+" was never answered", p), true
		}
	}
	return reports.Finding{}, false
}

// exponent is how the time grows against the size: 1 linear, 2 quadratic.
func exponent(t0, t1 int64, s0, s1 int) float64 {
	if s1 <= s0 || s0 <= 0 {
		return math.Inf(1)
	}
	return math.Log(float64(t1)/float64(t0)) / math.Log(float64(s1)/float64(s0))
}

func (r *growthRun) report(pts []*growthPoint, how string, worst *growthPoint) reports.Finding {
	var steps []string
	for _, p := range pts {
		took := "unanswered"
		if p.answered {
			took = words.Duration(p.best)
		}
		steps = append(steps, fmt.Sprintf("%s: %s", sizeText(p.size), took))
	}
	method, target, _ := strings.Cut(r.name, " ")
	ev := []reports.Evidence{worst.req}
	if worst.answered {
		ev = append(ev, worst.ans)
	}
	f := reports.NewFinding(reports.RuleCostGrowsWithInput,
		fmt.Sprintf("%s %s: the answer time grows faster than the input (%s); %s. A request a few bytes longer costs many times the time: one small request ties the server up, and every client waits with it", method, target, strings.Join(steps, ", "), how), ev)
	f.Request = &reports.Request{ID: worst.id, Method: method}
	return f
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
