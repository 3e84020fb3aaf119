package explore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// session is a baseline: a handshake, three calls of two tools, each
// answered, two progress notifications.
var session = []suite.Message{
	{Dir: "c2s", Kind: "request", Method: "initialize"},
	{Dir: "s2c", Kind: "response", Method: "initialize"},
	{Dir: "c2s", Kind: "notification", Method: "notifications/initialized"},
	{Dir: "c2s", Kind: "request", Method: "tools/call", Tool: "echo"},
	{Dir: "s2c", Kind: "notification", Method: "notifications/progress"},
	{Dir: "s2c", Kind: "response", Method: "tools/call", Tool: "echo"},
	{Dir: "c2s", Kind: "request", Method: "tools/call", Tool: "echo"},
	{Dir: "s2c", Kind: "notification", Method: "notifications/progress"},
	{Dir: "s2c", Kind: "response", Method: "tools/call", Tool: "echo"},
	{Dir: "c2s", Kind: "request", Method: "tools/call", Tool: "slow"},
	{Dir: "s2c", Kind: "response", Method: "tools/call", Tool: "slow"},
}

// planted is a fake target with one bug: it crashes when a burst of
// notifications follows a tool call, whatever the count, and flakes once:
// the first eof on the slow tool's answer finds a zombie, never again.
type planted struct {
	mu     sync.Mutex
	plans  [][]string
	flaked bool
}

func (p *planted) Run(_ context.Context, sc faults.Scenario, skip []string) (suite.Trial, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.plans = append(p.plans, sc.Faults)
	t := suite.Trial{Result: reports.ScenarioResult{Name: sc.Name}}
	for _, spec := range sc.Faults {
		switch {
		case strings.HasPrefix(spec, "burst:on=c2s:request:tools/call"):
			t.Findings = append(t.Findings, reports.Finding{Kind: "crash", Severity: "error", Signature: "go:panic", Scenario: sc.Name})
		case strings.HasPrefix(spec, "eof:on=s2c:response:tools/call") && strings.Contains(spec, "tool=slow") && !p.flaked:
			p.flaked = true
			t.Findings = append(t.Findings, reports.Finding{Kind: "zombie", Severity: "error", Scenario: sc.Name})
		case strings.HasPrefix(spec, "id-collision") && strings.Contains(spec, "nth=1"):
			// Nothing else is in flight beside the first call: the
			// fault never fires.
			t.Result.Indeterminate = []string{"no fault fired: nothing else in flight"}
		}
	}
	return t, nil
}

func explored(t *testing.T, parallel int) (*Result, *planted) {
	t.Helper()
	target := &planted{}
	res, err := Explore(context.Background(), Options{
		Runner: target, Points: Enumerate(session, Target{Stateful: true}), Seed: 7,
		Budget: time.Hour, Parallel: parallel, Tools: []string{"echo", "slow"}, Clock: tick(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, target
}

func TestExploreFindsShrinksAndReproduces(t *testing.T) {
	res, _ := explored(t, 4)
	var crash, zombie *Group
	for _, g := range res.Groups {
		switch g.Signature {
		case "crash go:panic":
			crash = g
		case "zombie":
			zombie = g
		}
	}
	if crash == nil || zombie == nil {
		t.Fatalf("groups %v, want the crash and the zombie", signatures(res.Groups))
	}
	want := []string{"burst:on=c2s:request:tools/call,nth=1,tool=echo,dir=c2s,method=notifications/roots/list_changed,count=1,position=after"}
	if diff := cmp.Diff(want, Specs(crash.Minimal)); diff != "" {
		t.Errorf("the crash's smallest plan (-want +got):\n%s", diff)
	}
	if crash.Reproduced != DefaultRepeats || crash.Tries != DefaultRepeats {
		t.Errorf("the crash reproduced %d of %d, want every re-run", crash.Reproduced, crash.Tries)
	}
	if crash.SkipTools == nil || !slices.Equal(crash.SkipTools, []string{"slow"}) {
		t.Errorf("the crash's workload skips %v, want the slow tool it does not need", crash.SkipTools)
	}
	// The flake is reported once, with the plan that found it.
	if zombie.Reproduced != 0 || !slices.Equal(Specs(zombie.Minimal), Specs(zombie.First)) {
		t.Errorf("the flaky zombie: reproduced %d, minimal %v, first %v; want 0 and its first plan", zombie.Reproduced, Specs(zombie.Minimal), Specs(zombie.First))
	}
	if res.Skipped == 0 {
		t.Errorf("dynamic reduction skipped nothing")
	}
}

// A class whose point did not land tries its next point: id-collision on
// a tool's first call never fires here, and every first call is tried;
// on a later call it fires, and one is enough.
func TestAClassThatDidNotLandTriesItsNextPoint(t *testing.T) {
	_, target := explored(t, 1)
	var tried []string
	for _, plan := range target.plans {
		if len(plan) == 1 && strings.HasPrefix(plan[0], "id-collision:") {
			tried = append(tried, plan[0])
		}
	}
	slices.Sort(tried)
	want := []string{
		"id-collision:on=c2s:request:tools/call,nth=1,tool=echo",
		"id-collision:on=c2s:request:tools/call,nth=1,tool=slow",
		"id-collision:on=c2s:request:tools/call,nth=2,tool=echo",
	}
	if diff := cmp.Diff(want, tried); diff != "" {
		t.Errorf("id-collision's points run alone (-want +got):\n%s", diff)
	}
}

// The same seed explores the same points in the same order.
func TestTheSameSeedExploresTheSamePoints(t *testing.T) {
	a, _ := explored(t, 1)
	b, _ := explored(t, 1)
	if diff := cmp.Diff(searchPlans(a), searchPlans(b)); diff != "" {
		t.Errorf("two searches with one seed (-first +second):\n%s", diff)
	}
}

func TestSystematicPassStopsAtMaxRuns(t *testing.T) {
	target := &planted{}
	res, err := Explore(context.Background(), Options{
		Runner: target, Points: Enumerate(session, Target{Stateful: true}), Seed: 7, MaxRuns: 5, Parallel: 2, Repeats: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range res.Runs {
		if r.Phase == PhaseSystematic || r.Phase == PhaseCombination {
			n++
		}
	}
	if n != 5 {
		t.Errorf("%d runs in the search, want --max-runs 5", n)
	}
	if len(res.Unreached) == 0 {
		t.Errorf("5 runs reached every family")
	}
}

func signatures(gs []*Group) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Signature)
	}
	return out
}

// searchPlans are the plans of a search's own runs, in order: shrinking
// runs its groups side by side.
func searchPlans(r *Result) [][]string {
	var out [][]string
	for _, run := range r.Runs {
		if run.Phase == PhaseSystematic || run.Phase == PhaseCombination {
			out = append(out, Specs(run.Plan))
		}
	}
	return out
}

// A search stopped by --max-runs and resumed from its state makes none of
// its runs again, and between them they run the points one search would.
func TestAResumedSearchGoesOnWhereItStopped(t *testing.T) {
	points := Enumerate(session, Target{Stateful: true})
	var saved *State
	first := &planted{}
	o := Options{Runner: first, Points: points, Seed: 7, MaxRuns: 6, Parallel: 1, Repeats: 1, Budget: time.Hour, Clock: tick(),
		Save: func(st *State) error { saved = st; return nil }}
	if _, err := Explore(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if saved == nil || len(saved.Runs) != 6 {
		t.Fatalf("the state holds %v runs, want the 6 made", saved)
	}
	second := &planted{}
	o.Runner, o.Resume, o.MaxRuns = second, saved, 0
	res, err := Explore(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range first.plans[:6] {
		for _, again := range second.plans {
			if slices.Equal(plan, again) && len(plan) == 1 && !strings.Contains(plan[0], "count=") {
				t.Errorf("resumed search ran %v again", plan)
			}
		}
	}
	whole, _ := explored(t, 1)
	if got, want := systematicSpecs(res), systematicSpecs(whole); !cmp.Equal(got, want) {
		t.Errorf("stopped and resumed, the systematic pass ran (-want +got):\n%s", cmp.Diff(want, got))
	}
	if res.Resumed != 6 {
		t.Errorf("%d runs resumed, want 6", res.Resumed)
	}
}

// The shards of a search run disjoint slices of its classes, which together
// are the whole search's.
func TestShardsSplitTheFaultSpace(t *testing.T) {
	points := Enumerate(session, Target{Stateful: true})
	var union []string
	for k := 1; k <= 3; k++ {
		res, err := Explore(context.Background(), Options{Runner: &planted{}, Points: points, Seed: 7, Parallel: 1, Repeats: 1,
			Shard: &Shard{K: k, N: 3}, Budget: time.Hour, Clock: tick()})
		if err != nil {
			t.Fatal(err)
		}
		union = append(union, systematicSpecs(res)...)
	}
	whole, _ := explored(t, 1)
	slices.Sort(union)
	if want := systematicSpecs(whole); !cmp.Equal(union, want) {
		t.Errorf("three shards ran (-whole +shards):\n%s", cmp.Diff(want, union))
	}
}

func systematicSpecs(r *Result) []string {
	var out []string
	for _, run := range r.Runs {
		if run.Phase == PhaseSystematic {
			out = append(out, Specs(run.Plan)...)
		}
	}
	slices.Sort(out)
	return out
}

// tick is a clock that moves a second each time it is read.
func tick() func() time.Time {
	var mu sync.Mutex
	clock := time.Unix(0, 0)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
}

// The answers a crash lost are its consequence: a run with a crash has the
// crash as its cause, and a run without one has its lost responses.
func TestCauses(t *testing.T) {
	crash := reports.Finding{Kind: reports.KindCrash, Rule: "crash-exit", Signature: "exit:1"}
	lost := reports.Finding{Kind: reports.KindLostResponse, Request: &reports.Request{Method: "tools/call", Tool: "echo"}}
	hang := reports.Finding{Kind: reports.KindHang, Rule: "unanswered-request", Request: &reports.Request{Method: "tools/call", Tool: "slow"}}
	for _, tc := range []struct {
		findings []reports.Finding
		want     []string
	}{
		{[]reports.Finding{lost, crash, lost}, []string{"crash/crash-exit exit:1"}},
		{[]reports.Finding{lost, hang}, []string{"lost-response", "hang/unanswered-request on tool slow"}},
		// Whichever call a peer that ended had in flight, it is one loss.
		{[]reports.Finding{lost, {Kind: reports.KindLostResponse, Request: &reports.Request{Method: "prompts/get"}}}, []string{"lost-response"}},
	} {
		if diff := cmp.Diff(tc.want, Causes(tc.findings)); diff != "" {
			t.Errorf("Causes (-want +got):\n%s", diff)
		}
	}
}
