package explore

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/mcpchaos/mcpchaos/suite"
)

// maxEarlier bounds the earlier positions shrinking tries for one fault.
const maxEarlier = 4

// errCut is the budget ending a shrink.
var errCut = errors.New("the budget ended")

// shrinkAll shrinks every group, side by side, then runs each shrunk plan
// again Repeats times.
func (s *search) shrinkAll(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(s.res.Groups))
	for i, g := range s.res.Groups {
		if g.Resumed || g.Minimal != nil {
			continue // shrunk by an earlier search, or an earlier round
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.shrink(ctx, g)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// shrink makes g's plan as small as it can while it still reproduces g's
// signature: it drops faults, moves each trigger to the earliest message
// of its pattern that still fails, lowers counts, sizes and durations, and
// trims the workload to the tools that matter. Each step is kept only if a
// run of it reproduces. It then runs the smallest plan Repeats times.
func (s *search) shrink(ctx context.Context, g *Group) error {
	cur, skip := g.First, []string(nil)
	reproduced := false
	try := func(plan []Fault, skipTools []string) (bool, error) {
		if !s.o.Clock().Before(s.end) {
			g.Cut = true
			return false, errCut
		}
		t, err := s.shrinkRun(ctx, PhaseShrink, plan, skipTools)
		if err != nil {
			return false, err
		}
		g.ShrinkRuns++
		if !reproduces(t, g.Signature) {
			return false, nil
		}
		cur, skip, reproduced = plan, skipTools, true
		g.Trial = t
		return true, nil
	}
	err := s.shrinkSteps(g.First, try, g)
	if err != nil && !errors.Is(err, errCut) {
		return err
	}
	g.Minimal, g.SkipTools = cur, skip
	// The re-runs say how often the smallest plan reproduces; they are
	// made even when the budget has ended, or a finding would go out
	// without its rate.
	return s.repeat(ctx, g, reproduced)
}

// shrinkSteps are shrink's steps, each trying smaller plans through try
// (which keeps the last that reproduced as the current one).
func (s *search) shrinkSteps(first []Fault, try func([]Fault, []string) (bool, error), g *Group) error {
	plan := first
	// Drop faults, one at a time, while the rest still reproduce.
	for i := 0; len(plan) > 1 && i < len(plan); {
		smaller := slices.Delete(slices.Clone(plan), i, i+1)
		ok, err := try(smaller, nil)
		if err != nil {
			return err
		}
		if ok {
			plan = smaller
			continue
		}
		i++
	}
	// Each trigger on the earliest message of its pattern that still fails.
	for i := range plan {
		for n := 1; n < plan[i].Nth && n <= maxEarlier; n++ {
			earlier := slices.Clone(plan)
			earlier[i].Nth = n
			ok, err := try(earlier, nil)
			if err != nil {
				return err
			}
			if ok {
				plan = earlier
				break
			}
		}
	}
	// Smaller counts, sizes and durations, the smallest first.
	for i := range plan {
		fam, _ := familyNamed(plan[i].Family)
		for _, p := range plan[i].Params {
			ladder := fam.ladders[p.Key]
			for j := len(ladder) - 1; j >= 0; j-- {
				smaller := slices.Clone(plan)
				smaller[i] = plan[i].with(p.Key, ladder[j])
				ok, err := try(smaller, nil)
				if err != nil {
					return err
				}
				if ok {
					plan = smaller
					break
				}
			}
		}
	}
	// The workload without the tools neither the plan nor the finding
	// names.
	if skip := s.unneededTools(plan, g); len(skip) > 0 {
		if _, err := try(plan, skip); err != nil {
			return err
		}
	}
	return nil
}

// shrinkRun makes one run outside the search, in a slot of its own.
func (s *search) shrinkRun(ctx context.Context, phase string, plan []Fault, skipTools []string) (suite.Trial, error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return suite.Trial{}, ctx.Err()
	}
	defer func() { <-s.slots }()
	r, err := s.run(ctx, phase, plan, skipTools)
	if err != nil {
		return suite.Trial{}, err
	}
	return r.trial, nil
}

// repeat runs g's smallest plan Repeats times, side by side, and counts
// the runs that found g again.
func (s *search) repeat(ctx context.Context, g *Group, shrunk bool) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs = make([]error, s.o.Repeats)
	)
	for i := range s.o.Repeats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := s.shrinkRun(ctx, PhaseRepeat, g.Minimal, g.SkipTools)
			if err != nil {
				errs[i] = err
				return
			}
			mu.Lock()
			defer mu.Unlock()
			g.Tries++
			if reproduces(t, g.Signature) {
				g.Reproduced++
				if !shrunk { // the first plan's own run stands, unless it never reproduced
					g.Trial, shrunk = t, true
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// unneededTools are the tools of the baseline's workload that neither the
// plan's triggers nor the group's findings name: those shrinking tries to
// do without (nil when every tool is needed).
func (s *search) unneededTools(plan []Fault, g *Group) []string {
	need := map[string]bool{}
	for _, f := range plan {
		if f.At.Tool != "" {
			need[f.At.Tool] = true
		}
	}
	for _, f := range g.Trial.Findings {
		if f.Request != nil && f.Request.Tool != "" && Signature(f) == g.Signature {
			need[f.Request.Tool] = true
		}
	}
	// A finding about no tool, from a fault on no tool call, is tried
	// with no tool call at all.
	var skip []string
	for _, t := range s.o.Tools {
		if !need[t] {
			skip = append(skip, t)
		}
	}
	return skip
}

func reproduces(t suite.Trial, signature string) bool {
	for _, f := range t.Findings {
		if Signature(f) == signature {
			return true
		}
	}
	return false
}
