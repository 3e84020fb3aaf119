package explore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// Runner runs one scenario against a fresh target and judges it: the
// findings of the trial are its own, beyond the baseline's.
type Runner interface {
	Run(ctx context.Context, sc faults.Scenario, skipTools []string) (suite.Trial, error)
}

// Defaults for Options fields left zero.
const (
	DefaultBudget  = 5 * time.Minute
	DefaultRepeats = 5
)

// shrinkReserve is the share of the budget the search leaves for shrinking
// once it has found something: a finding not shrunk is a finding a person
// must shrink by hand.
const shrinkReserve = 0.3

// Options says what to search and how long.
type Options struct {
	Runner Runner
	Points []Point
	// Client says a client program is under test (Enumerate's Target).
	Client bool
	Seed   uint64
	// Budget bounds the whole search, shrinking included (default
	// DefaultBudget); MaxRuns, if set, bounds the runs of the search
	// itself (one fault a run, then combinations), shrinking apart.
	Budget  time.Duration
	MaxRuns int
	// Parallel is how many runs go at once (at least 1).
	Parallel int
	// Tools are the tools the baseline's workload called: shrinking tries
	// the workload without those a finding does not need.
	Tools []string
	// Shard, if set, keeps the search to its slice of the fault space.
	Shard *Shard
	// Repeats is how many times a shrunk plan is run again to say how
	// often it reproduces (default DefaultRepeats).
	Repeats int
	// Resume, if set, is an earlier search's state (StateKey must match):
	// its runs are not made again, its findings not shrunk again. Save, if
	// set, is given the state after every batch of runs and at the end.
	Resume   *State
	Save     func(*State) error
	StateKey string
	// Progress, if set, hears how the search goes after each run.
	Progress func(Status)
	// Clock is time.Now unless a test sets it.
	Clock func() time.Time
}

// Shard is slice K of N of the fault space.
type Shard struct{ K, N int }

func (s *Shard) holds(i int) bool { return s == nil || i%s.N == s.K-1 }

// Status is where a search stands.
type Status struct {
	Phase    string
	Ran      int // runs made
	Left     int // points of the systematic pass not yet run
	Skipped  int // points skipped by reduction
	Found    int // finding groups so far
	TimeLeft time.Duration
}

// Phases of a search, as runs record them.
const (
	PhaseSystematic  = "systematic"
	PhaseCombination = "combination"
	PhaseShrink      = "shrink"
	PhaseRepeat      = "repeat"
)

// Run is one run of the search.
type Run struct {
	Phase string
	Plan  []Fault
	// SkipTools are the tools the run's workload left out.
	SkipTools []string
	Result    reports.ScenarioResult
	// Fired says a fault of the plan acted; Landed that it had its effect.
	Fired, Landed bool
	// Signatures are those of its findings.
	Signatures []string
}

// Group is the findings of one signature, and the smallest plan found
// that reproduces them.
type Group struct {
	Signature string
	// First is the plan of the run that found it first, FoundAfter how
	// long into the search.
	First      []Fault
	FoundAfter time.Duration
	// FoundBy counts the search's runs that found it.
	FoundBy int
	// Minimal is the smallest plan that reproduced it; SkipTools the tools
	// the workload could do without. Equal to First when shrinking made
	// it no smaller or could not reproduce it at all.
	Minimal   []Fault
	SkipTools []string
	// Trial is the run of Minimal that reproduced it (of First when it
	// never reproduced), whose findings the report gives.
	Trial suite.Trial
	// Reproduced of Tries re-runs of Minimal found it again.
	Reproduced, Tries int
	// ShrinkRuns is how many runs shrinking made; Cut says the budget
	// stopped it before it was done.
	ShrinkRuns int
	Cut        bool
	// Resumed says an earlier search found and shrank it (Options.Resume).
	Resumed bool
}

// Result is what a search did and found.
type Result struct {
	Points  int
	Runs    []Run
	Skipped int
	Groups  []*Group
	// Unreached are the families with points the budget left unrun.
	Unreached []string
	Coverage  []Coverage
	Elapsed   time.Duration
	// Budgeted says the budget (not the fault space or --max-runs) ended
	// the search.
	Budgeted bool
	// Resumed counts the runs taken from an earlier search's state.
	Resumed int
}

// Coverage is what the search did with one family's points on one method.
type Coverage struct {
	Family, Method string
	Points         int
	Run            int
	Skipped        int
	NotLanded      int
	Found          int
}

type search struct {
	o       Options
	start   time.Time
	end     time.Time
	mu      sync.Mutex
	res     *Result
	groups  map[string]*Group
	next    int // the number of the next run's scenario
	started int // the search's own runs started
	left    int
	stopped bool        // the budget or MaxRuns ended the search
	trial   map[int]int // point index -> index in res.Runs
	skipped map[int]bool
	// mine are the points of the search's shard.
	mine map[int]bool
	// slots holds a token for each run going: Parallel at most.
	slots chan struct{}
	// resumed are the systematic runs of an earlier search, by spec.
	resumed map[string]int
	// combos is the index of the next combination to draw.
	combos int
	// exhausted says the combinations can draw nothing new.
	exhausted bool
}

// Explore searches the fault space, then shrinks what it found.
func Explore(ctx context.Context, o Options) (*Result, error) {
	if o.Runner == nil {
		return nil, errors.New("explore: no runner")
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.Repeats <= 0 {
		o.Repeats = DefaultRepeats
	}
	o.Parallel = max(o.Parallel, 1)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	s := &search{o: o, res: &Result{Points: len(o.Points)}, groups: map[string]*Group{},
		trial: map[int]int{}, skipped: map[int]bool{}, mine: map[int]bool{}, slots: make(chan struct{}, o.Parallel),
		resumed: map[string]int{}}
	if o.Resume != nil {
		s.resume(o.Resume)
	}
	s.start = o.Clock()
	s.end = s.start.Add(o.Budget)
	if err := s.systematic(ctx); err != nil {
		return nil, err
	}
	// Combinations, then shrinking what they found; while the budget has
	// time left after shrinking, the combinations go on.
	for {
		if err := s.combinations(ctx); err != nil {
			return nil, err
		}
		if err := s.shrinkAll(ctx); err != nil {
			return nil, err
		}
		if err := s.save(); err != nil {
			return nil, err
		}
		if !s.goOn(ctx) {
			break
		}
	}
	s.res.Elapsed = o.Clock().Sub(s.start)
	s.coverage()
	return s.res, nil
}

// searchEnd is when the search stops starting runs: the budget's end, or,
// once something was found, early enough to leave time for shrinking it.
func (s *search) searchEnd() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.searchEndLocked()
}

func (s *search) searchEndLocked() time.Time {
	reserve := 0.0
	for _, g := range s.res.Groups {
		switch {
		case g.Minimal == nil && !g.Resumed:
			reserve = shrinkReserve
		case reserve == 0:
			reserve = repeatReserve
		}
	}
	return s.end.Add(-time.Duration(float64(s.o.Budget) * reserve))
}

// repeatReserve is the share of the budget the search leaves once what it
// found is shrunk: enough to shrink one more finding's plan a little and
// re-run it.
const repeatReserve = 0.1

// goOn says whether the combinations go on after shrinking: the budget
// has time left beyond the reserve, and neither --max-runs, the context
// nor the combinations themselves (every draw already run) ended them.
func (s *search) goOn(ctx context.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil || s.exhausted || (s.o.MaxRuns > 0 && s.started >= s.o.MaxRuns) {
		return false
	}
	if !s.o.Clock().Before(s.searchEndLocked()) {
		return false
	}
	s.stopped = false
	return true
}

// mayStart says whether the search may start one more run of its own, and
// counts it as started.
func (s *search) mayStart() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || (s.o.MaxRuns > 0 && s.started >= s.o.MaxRuns) {
		s.stopped = true
		return false
	}
	s.started++
	return true
}

// systematic runs the points one fault a run, in waves: the first wave
// runs one point of each equivalence class (same family, pattern and
// position class), in an order drawn from the seed; a class whose point
// landed is done, and its other points are skipped; a class whose point did
// not land (the moment never came, or the fault could not have its effect)
// tries its next point in the next wave.
func (s *search) systematic(ctx context.Context) error {
	type class struct {
		members []int
		tried   int
		done    bool
	}
	var keys []string
	classes := map[string]*class{}
	for i, p := range s.o.Points {
		k := p.key()
		c := classes[k]
		if c == nil {
			c = &class{}
			classes[k] = c
			keys = append(keys, k)
		}
		c.members = append(c.members, i)
	}
	rng := rand.New(rand.NewPCG(s.o.Seed, 0x6578706c6f7265)) // "explore"
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var mine []*class
	for i, k := range keys {
		if s.o.Shard.holds(i) {
			mine = append(mine, classes[k])
			for _, m := range classes[k].members {
				s.mine[m] = true
			}
		}
	}
	s.left = 0
	for _, c := range mine {
		s.left += len(c.members)
	}
	s.res.Points = s.left
	for {
		var wave []int
		resumed := false
		for _, c := range mine {
			if !c.done && c.tried < len(c.members) {
				m := c.members[c.tried]
				c.tried++
				if ri, ok := s.resumed[s.o.Points[m].Fault.Spec()]; ok {
					s.trial[m] = ri
					s.left--
					resumed = true
					continue
				}
				wave = append(wave, m)
			}
		}
		if len(wave) == 0 && !resumed {
			break
		}
		plans := make([][]Fault, len(wave))
		for i, pi := range wave {
			plans[i] = []Fault{s.o.Points[pi].Fault}
		}
		runs, err := s.batch(ctx, PhaseSystematic, plans)
		if err != nil {
			return err
		}
		for i, r := range runs {
			if r != nil {
				s.trial[wave[i]] = r.index
			}
		}
		for _, c := range mine {
			if c.done || c.tried == 0 {
				continue
			}
			last := c.members[c.tried-1]
			ri, ok := s.trial[last]
			if !ok { // not run: the search stopped
				continue
			}
			if s.res.Runs[ri].Landed {
				c.done = true
				for _, m := range c.members[c.tried:] {
					s.skipped[m] = true
				}
				s.res.Skipped += len(c.members) - c.tried
				s.left -= len(c.members) - c.tried
			}
		}
		if err := s.save(); err != nil {
			return err
		}
		if s.isStopped() {
			break
		}
	}
	return nil
}

func (s *search) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// combinations runs seeded combinations of two or three of the points that
// landed, on different messages, while the budget lasts.
func (s *search) combinations(ctx context.Context) error {
	// The points that landed, and those skipped as equivalent to one that
	// did: a combination may pick a tool the systematic pass skipped.
	var landed []int
	for pi, ri := range s.trial {
		if s.res.Runs[ri].Landed {
			landed = append(landed, pi)
		}
	}
	for pi := range s.skipped {
		landed = append(landed, pi)
	}
	slices.Sort(landed)
	if len(landed) < 2 {
		s.exhausted = true
		return nil
	}
	ran := map[string]bool{}
	for _, r := range s.res.Runs {
		ran[planKey(r.Plan)] = true
	}
	repeats := 0
	for !s.isStopped() && repeats < maxRepeatedDraws {
		var plans [][]Fault
		for len(plans) < s.o.Parallel && repeats < maxRepeatedDraws {
			idx := s.combos
			s.combos++
			if !s.o.Shard.holds(idx) {
				continue
			}
			plan := s.combination(idx, landed)
			if k := planKey(plan); ran[k] {
				repeats++
				continue
			} else {
				ran[k] = true
			}
			repeats = 0
			plans = append(plans, plan)
		}
		if _, err := s.batch(ctx, PhaseCombination, plans); err != nil {
			return err
		}
		if err := s.save(); err != nil {
			return err
		}
	}
	if repeats >= maxRepeatedDraws {
		s.exhausted = true
	}
	return nil
}

// maxRepeatedDraws is how many draws in a row may give combinations
// already run before the combinations are taken as exhausted.
const maxRepeatedDraws = 200

// planKey is a plan's faults, in any order.
func planKey(plan []Fault) string {
	specs := Specs(plan)
	slices.Sort(specs)
	return strings.Join(specs, "\n")
}

// combination is the idx-th combination: drawn from the seed and idx
// alone, so that every shard draws the same ones.
func (s *search) combination(idx int, landed []int) []Fault {
	rng := rand.New(rand.NewPCG(s.o.Seed, uint64(idx)+1))
	k := min(2+rng.IntN(2), len(landed))
	var plan []Fault
	used := map[string]bool{}
	for _, j := range rng.Perm(len(landed)) {
		f := s.o.Points[landed[j]].Fault
		at := f.At.String() + fmt.Sprint(f.Nth)
		if used[at] {
			continue
		}
		used[at] = true
		plan = append(plan, f)
		if len(plan) == k {
			break
		}
	}
	return plan
}

// indexedRun is a run with its place in res.Runs.
type indexedRun struct {
	Run
	index int
	trial suite.Trial
}

// batch runs plans, up to Parallel at once, in their order, and records
// them. A plan is not started once the search must stop (its slot is nil).
func (s *search) batch(ctx context.Context, phase string, plans [][]Fault) ([]*indexedRun, error) {
	out := make([]*indexedRun, len(plans))
	errs := make([]error, len(plans))
	var wg sync.WaitGroup
	for i, plan := range plans {
		s.slots <- struct{}{}
		if ctx.Err() != nil || !s.mayStart() || !s.o.Clock().Before(s.searchEnd()) {
			<-s.slots
			s.stop()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-s.slots }()
			out[i], errs[i] = s.run(ctx, phase, plan, nil)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *search) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.res.Budgeted = s.res.Budgeted || !s.o.Clock().Before(s.searchEndLocked())
}

// run makes one run of plan and records it; a search run's findings open
// or join their groups.
func (s *search) run(ctx context.Context, phase string, plan []Fault, skipTools []string) (*indexedRun, error) {
	s.mu.Lock()
	s.next++
	name := fmt.Sprintf("explore-%04d", s.next)
	// Counted before it ends, so that MaxRuns holds with runs at once.
	index := len(s.res.Runs)
	s.res.Runs = append(s.res.Runs, Run{Phase: phase, Plan: plan})
	s.mu.Unlock()

	t, err := s.o.Runner.Run(ctx, s.scenario(name, plan), skipTools)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("run %s (%s): %w", name, specs(plan), err)
	}
	r := Run{Phase: phase, Plan: plan, SkipTools: skipTools, Result: t.Result, Fired: t.Fired(), Landed: t.Landed()}
	r.Signatures = Causes(t.Findings)
	s.mu.Lock()
	s.res.Runs[index] = r
	if phase == PhaseSystematic || phase == PhaseCombination {
		if phase == PhaseSystematic && s.left > 0 {
			s.left--
		}
		for _, sig := range r.Signatures {
			g := s.groups[sig]
			if g == nil {
				g = &Group{Signature: sig, First: plan, FoundAfter: s.o.Clock().Sub(s.start), Trial: t}
				s.groups[sig] = g
				s.res.Groups = append(s.res.Groups, g)
			}
			g.FoundBy++
		}
	}
	status := s.statusLocked(phase)
	s.mu.Unlock()
	if s.o.Progress != nil {
		s.o.Progress(status)
	}
	return &indexedRun{Run: r, index: index, trial: t}, nil
}

func (s *search) statusLocked(phase string) Status {
	return Status{Phase: phase, Ran: len(s.res.Runs), Left: s.left, Skipped: s.res.Skipped,
		Found: len(s.groups), TimeLeft: max(0, s.end.Sub(s.o.Clock()))}
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// scenario is the scenario of a plan; its name is the run's. For a client
// under test it says what the program must do: fail when a fault of the
// plan makes a call impossible, else succeed.
func (s *search) scenario(name string, plan []Fault) faults.Scenario {
	sc := faults.Scenario{Name: name, Doc: "explore: " + specs(plan), Faults: Specs(plan)}
	if s.o.Client {
		sc.Expect = "success"
		for _, f := range plan {
			for _, fam := range clientFamilies {
				if fam.name == f.Family && fam.expect != "" {
					sc.Expect = fam.expect
				}
			}
		}
	}
	return sc
}

// Specs are a plan's faults as --fault specs.
func Specs(plan []Fault) []string {
	out := make([]string, len(plan))
	for i, f := range plan {
		out[i] = f.Spec()
	}
	return out
}

func specs(plan []Fault) string { return strings.Join(Specs(plan), " + ") }

// Causes are the signatures of the findings of one run that stand for a
// bug of their own: the answers a server lost because it crashed are the
// crash's consequence, not a bug apart (a line reader that dies on a bad
// line loses whatever calls were in flight, a different set each time), so
// a run with a crash groups its lost responses under the crash.
func Causes(fs []reports.Finding) []string {
	crashed := slices.ContainsFunc(fs, func(f reports.Finding) bool { return f.Kind == reports.KindCrash })
	var out []string
	for _, f := range fs {
		if crashed && f.Kind == reports.KindLostResponse {
			continue
		}
		out = appendNew(out, Signature(f))
	}
	return out
}

// Signature is what findings of one bug share across runs: their kind,
// rule, crash signature, and the method or tool they are about. A lost
// response is about no method: the peer ended, and which calls it had in
// flight is timing (go-sdk, which exits on a line that is not JSON, lost
// a different call each run, and each made a group of its own: 10 groups
// for one bug).
func Signature(f reports.Finding) string {
	s := f.Kind
	if f.Rule != "" && f.Rule != f.Kind {
		s += "/" + f.Rule
	}
	if f.Signature != "" {
		s += " " + f.Signature
	}
	if f.Request != nil && f.Kind != reports.KindLostResponse {
		switch {
		case f.Request.Tool != "":
			s += " on tool " + f.Request.Tool
		case f.Request.Method != "":
			s += " on " + f.Request.Method
		}
	}
	return s
}
