package suite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/machine"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// recordedProgress keeps what a progress display was told, in order.
type recordedProgress struct {
	mu     sync.Mutex
	events []string
}

func (p *recordedProgress) Started(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, "start "+name)
}

func (p *recordedProgress) Finished(name, outcome string, findings int, _ time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, fmt.Sprintf("end %s %s %d", name, outcome, findings))
}

func crashFinding(scenario string) reports.Finding {
	return reports.Finding{Kind: reports.KindCrash, Severity: reports.SeverityError, Signature: "go:panic", Scenario: scenario}
}

func scenarioNames(names ...string) []faults.Scenario {
	var out []faults.Scenario
	for _, n := range names {
		out = append(out, faults.Scenario{Name: n})
	}
	return out
}

// With more than one at a time, the baseline runs beside the scenarios
// rather than before them: here it cannot end until the last scenario has
// started, which one at a time would never reach. A scenario that ends
// first is told to the display only once the baseline's findings are
// known, with its own findings beyond them; the runs come back in order.
func TestMatrixRunsTheBaselineBesideTheScenarios(t *testing.T) {
	started := make(chan string, 3)
	progress := &recordedProgress{}
	m := matrix{n: 4, baseline: faults.Baseline, scenarios: scenarioNames("a", "baseline", "b", "c"), progress: progress,
		host: &twoCores, cpu: cpuAt(0.2),
		run: func(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
			r := &scenarioRun{result: reports.ScenarioResult{Name: sc.Name}}
			if sc.Name != faults.Baseline.Name {
				started <- sc.Name
				if sc.Name == "b" {
					// The baseline's bug, and one of b's own.
					r.verdict = judge.Verdict{Findings: []reports.Finding{crashFinding("b"), {Kind: reports.KindHang, Severity: reports.SeverityError, Scenario: "b"}}}
				}
				return r, nil
			}
			for range 3 {
				select {
				case <-started:
				case <-time.After(10 * time.Second):
					return nil, errors.New("the scenarios did not start beside the baseline")
				}
			}
			r.verdict = judge.Verdict{Findings: []reports.Finding{crashFinding("baseline")}}
			return r, nil
		},
		unusable: func(*scenarioRun) bool { return false },
	}
	base, runs, err := m.runMatrix(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range runs {
		names = append(names, r.result.Name)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, names); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if base.result.Name != faults.Baseline.Name {
		t.Errorf("base is %q", base.result.Name)
	}
	ends := map[string]string{}
	baselineEnded := false
	for _, e := range progress.events {
		var name, outcome string
		var n int
		if _, err := fmt.Sscanf(e, "end %s %s %d", &name, &outcome, &n); err != nil {
			continue
		}
		if name == faults.Baseline.Name {
			baselineEnded = true
		} else if !baselineEnded {
			t.Errorf("%s was told ended before the baseline: %q", name, progress.events)
		}
		ends[name] = fmt.Sprintf("%s %d", outcome, n)
	}
	want := map[string]string{"baseline": "fail 1", "a": "pass 0", "b": "fail 1", "c": "pass 0"}
	if diff := cmp.Diff(want, ends); diff != "" {
		t.Errorf("what the display was told (-want +got):\n%s", diff)
	}
}

// One at a time is the behaviour of before: the baseline alone, then each
// scenario in order.
func TestMatrixOneAtATime(t *testing.T) {
	progress := &recordedProgress{}
	m := matrix{n: 1, baseline: faults.Baseline, scenarios: scenarioNames("a", "b"), progress: progress,
		run: func(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
			return &scenarioRun{result: reports.ScenarioResult{Name: sc.Name}}, nil
		},
		unusable: func(*scenarioRun) bool { return false },
	}
	if _, _, err := m.runMatrix(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"start baseline", "end baseline pass 0", "start a", "end a pass 0", "start b", "end b pass 0"}
	if diff := cmp.Diff(want, progress.events); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A baseline that cannot test the target (the server never initializes)
// stops the scenarios running beside it; made again alone, it still
// cannot, so the matrix returns the baseline alone, for the caller to
// report the set-up error, and the display hears of no scenario's end.
func TestMatrixStopsWhenTheBaselineCannotTest(t *testing.T) {
	progress := &recordedProgress{}
	stopped := make(chan string, 2)
	m := matrix{n: 3, baseline: faults.Baseline, scenarios: scenarioNames("a", "b"), progress: progress,
		host: &twoCores, cpu: cpuAt(0.2),
		run: func(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
			if sc.Name == faults.Baseline.Name {
				return &scenarioRun{probeErr: errors.New("no answer to initialize")}, nil
			}
			select {
			case <-ctx.Done():
				stopped <- sc.Name
				return nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return nil, errors.New("not stopped")
			}
		},
		unusable: func(base *scenarioRun) bool { return base.probeErr != nil },
	}
	start := time.Now()
	base, runs, err := m.runMatrix(context.Background())
	if err != nil || base == nil || base.probeErr == nil || runs != nil {
		t.Fatalf("runMatrix = %v, %v, %v; want the baseline alone", base, runs, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v: the scenarios were not stopped", took)
	}
	for _, e := range progress.events {
		if e != "start baseline" && e != "start a" && e != "start b" && e != "end baseline pass 0" {
			t.Errorf("the display was told %q", e)
		}
	}
}

// An error of the run itself (a transcript that cannot be written) ends
// the matrix with it, the baseline's first.
func TestMatrixReturnsTheRunsError(t *testing.T) {
	for _, n := range []int{1, 3} {
		m := matrix{n: n, baseline: faults.Baseline, scenarios: scenarioNames("a", "b"), host: &twoCores, cpu: cpuAt(0.2),
			run: func(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
				if sc.Name == "b" {
					return nil, errors.New("disk full")
				}
				return &scenarioRun{}, nil
			},
			unusable: func(*scenarioRun) bool { return false },
		}
		if _, _, err := m.runMatrix(context.Background()); err == nil || err.Error() != "disk full" {
			t.Errorf("n=%d: err = %v, want disk full", n, err)
		}
	}
}

var twoCores = host{cores: 2, memFree: 8 << 30, memKnown: true}

// cpuAt is a machine whose CPU is busy at share of its time, all the time.
func cpuAt(share float64) func() (machine.CPUSample, bool) {
	var mu sync.Mutex
	var s machine.CPUSample
	return func() (machine.CPUSample, bool) {
		mu.Lock()
		defer mu.Unlock()
		s.Total += 1000
		s.Idle += uint64(1000 * (1 - share))
		return s, true
	}
}

func unknownCPU() (machine.CPUSample, bool) { return machine.CPUSample{}, false }

// countingRuns is a scenario runner that counts the runs of each scenario
// and finds what find says for the nth of them (1 for the first).
type countingRuns struct {
	mu   sync.Mutex
	runs map[string]int
	find func(scenario string, nth int) []reports.Finding
}

func (c *countingRuns) run(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
	c.mu.Lock()
	if c.runs == nil {
		c.runs = map[string]int{}
	}
	c.runs[sc.Name]++
	nth := c.runs[sc.Name]
	c.mu.Unlock()
	r := &scenarioRun{result: reports.ScenarioResult{Name: sc.Name}}
	r.verdict.Findings = c.find(sc.Name, nth)
	return r, nil
}

func hangFinding(scenario string) reports.Finding {
	return reports.Finding{Kind: reports.KindHang, Severity: reports.SeverityError, Rule: reports.RuleUnanswered, Scenario: scenario}
}

// A scenario's finding that depends on time (a hang), made beside other
// runs, may be the neighbours' doing, whatever the CPU did (CI saw
// notion-mcp-server exit late beside seven copies of itself resolving
// api.notion.com, on a machine under 85% busy): the run is made again
// alone, and that run stands, with a note that says why it was made. A
// finding that does not depend on time (a crash) stands as found.
func TestMatrixMakesTimedFindingsAgainAlone(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cpu       func() (machine.CPUSample, bool)
		wantAgain bool
	}{
		{"busy", cpuAt(0.97), true},
		{"unknown", unknownCPU, true},
		{"idle", cpuAt(0.3), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &countingRuns{find: func(sc string, nth int) []reports.Finding {
				switch {
				case sc == "slow" && nth == 1: // hung only beside the others
					return []reports.Finding{hangFinding(sc)}
				case sc == "crashing":
					return []reports.Finding{crashFinding(sc)}
				}
				return nil
			}}
			progress := &recordedProgress{}
			m := matrix{n: 4, baseline: faults.Baseline, scenarios: scenarioNames("slow", "crashing", "quiet"), progress: progress,
				host: &twoCores, cpu: tc.cpu, run: c.run, unusable: func(*scenarioRun) bool { return false }}
			_, runs, err := m.runMatrix(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			wantRuns := map[string]int{"baseline": 1, "slow": 1, "crashing": 1, "quiet": 1}
			wantSlow := 1
			if tc.wantAgain {
				wantRuns["slow"], wantSlow = 2, 0
			}
			if diff := cmp.Diff(wantRuns, c.runs); diff != "" {
				t.Errorf("runs made (-want +got):\n%s", diff)
			}
			if got := len(runs[0].verdict.Findings); got != wantSlow {
				t.Errorf("slow has %d findings, want %d", got, wantSlow)
			}
			if got := len(runs[1].verdict.Findings); got != 1 {
				t.Errorf("crashing has %d findings, want its crash", got)
			}
			again := false
			for _, n := range runs[0].result.Notes {
				again = again || strings.Contains(n, "made again alone") && strings.Contains(n, "hang finding depends on time, and it ran beside others")
			}
			if again != tc.wantAgain {
				t.Errorf("slow's notes %q: a note that it was made again alone: %v, want %v", runs[0].result.Notes, again, tc.wantAgain)
			}
			ends := 0
			for _, e := range progress.events {
				if strings.HasPrefix(e, "end slow") {
					ends++
					if want := "end slow pass 0"; tc.wantAgain && e != want {
						t.Errorf("the display was told %q, want %q (the run alone)", e, want)
					}
				}
			}
			if ends != 1 {
				t.Errorf("the display heard of slow's end %d times: %q", ends, progress.events)
			}
		})
	}
}

// The baseline's own slow exit, on a busy machine, is confirmed alone
// before the scenarios' findings are counted beyond it; on an idle one it
// stands, so that a server that never exits on its own does not cost
// every matrix its baseline's time twice.
func TestMatrixMakesTheBaselineAgainAlone(t *testing.T) {
	zombie := reports.Finding{Kind: reports.KindZombie, Severity: reports.SeverityWarning, Rule: reports.RuleShutdownSIGTERM}
	for _, tc := range []struct {
		name      string
		busy      float64
		baselines int
	}{{"busy", 0.95, 2}, {"idle", 0.3, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &countingRuns{find: func(sc string, nth int) []reports.Finding {
				// The server never exits on its own: every run finds it.
				z := zombie
				z.Scenario = sc
				return []reports.Finding{z}
			}}
			m := matrix{n: 4, baseline: faults.Baseline, scenarios: scenarioNames("a", "b"),
				host: &twoCores, cpu: cpuAt(tc.busy), run: c.run, unusable: func(*scenarioRun) bool { return false }}
			base, runs, err := m.runMatrix(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// The scenarios' zombie is the baseline's: not theirs to confirm.
			if diff := cmp.Diff(map[string]int{"baseline": tc.baselines, "a": 1, "b": 1}, c.runs); diff != "" {
				t.Errorf("runs made (-want +got):\n%s", diff)
			}
			if len(base.verdict.Findings) != 1 || len(runs) != 2 {
				t.Fatalf("base %v, runs %d", base.verdict.Findings, len(runs))
			}
			said := slices.ContainsFunc(m.notes, func(n string) bool {
				return strings.HasPrefix(n, "the baseline was made again alone: its zombie finding depends on time")
			})
			if said != (tc.baselines == 2) {
				t.Errorf("notes %q: say the baseline was made again alone: %v, want %v", m.notes, said, tc.baselines == 2)
			}
		})
	}
}

// A target that takes one session at a time (a stdio server that locks a
// file, an HTTP server with one session slot): beside others, a run cannot
// open its session. Whichever run lost the race, the matrix ends with every
// run's session opened, made alone, and says why, rather than reporting
// what concurrency made.
func TestMatrixFallsBackForATargetOfOneSession(t *testing.T) {
	for _, n := range []int{2, 4} {
		var slot sync.Mutex
		var mu sync.Mutex
		made := map[string]int{}
		m := matrix{n: n, baseline: faults.Baseline, scenarios: scenarioNames("a", "b", "c"),
			host: &twoCores, cpu: cpuAt(0.2),
			run: func(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
				mu.Lock()
				made[sc.Name]++
				mu.Unlock()
				r := &scenarioRun{result: reports.ScenarioResult{Name: sc.Name}}
				if !slot.TryLock() {
					r.probeErr = errors.New("409 Conflict: a session is open")
					return r, nil
				}
				defer slot.Unlock()
				time.Sleep(50 * time.Millisecond)
				r.opened = true
				return r, nil
			},
			unusable: func(base *scenarioRun) bool { return base.probeErr != nil },
		}
		base, runs, err := m.runMatrix(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !base.opened {
			t.Fatalf("n=%d: the baseline never opened its session", n)
		}
		for _, r := range runs {
			if !r.opened {
				t.Errorf("n=%d: %s never opened its session (made %d times)", n, r.result.Name, made[r.result.Name])
			}
		}
		if !slices.ContainsFunc(m.notes, func(s string) bool { return strings.Contains(s, "one session at a time") }) {
			t.Errorf("n=%d: notes %q do not say the target takes one session at a time", n, m.notes)
		}
	}
}

func TestSizeParallel(t *testing.T) {
	small := host{cores: 2, memFree: 1 << 30, memKnown: true} // 4 runs of 256 MB
	unknownMem := host{cores: 2}
	for _, tc := range []struct {
		name        string
		asked, runs int
		mc          host
		want        int
		capped      bool
	}{
		{"auto takes every run of a small matrix", 0, 8, twoCores, 8, false},
		{"auto stops at four a core", 0, 20, twoCores, 8, false},
		{"auto stops where memory does", 0, 8, small, 4, false},
		{"auto without a memory figure", 0, 8, unknownMem, 8, false},
		{"one a time", 1, 8, twoCores, 1, false},
		{"asked for, within what the machine holds", 12, 20, twoCores, 12, false},
		{"more than the matrix has", 12, 8, twoCores, 8, false},
		{"more than the memory holds", 6, 8, small, 4, true},
		{"more than the cores hold", 40, 50, unknownMem, 32, true},
		{"nothing free still runs one", 0, 8, host{cores: 2, memKnown: true}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, note := sizeParallel(tc.asked, tc.runs, tc.mc)
			if n != tc.want || (note != "") != tc.capped {
				t.Errorf("sizeParallel(%d, %d, %v) = %d, %q; want %d, capped %v", tc.asked, tc.runs, tc.mc, n, note, tc.want, tc.capped)
			}
		})
	}
}

func TestLimiterLowered(t *testing.T) {
	l := newLimiter(2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if !l.acquire(ctx) || !l.acquire(ctx) {
		t.Fatal("two slots of two not given")
	}
	// A third run waits for a slot: lowering the limit holds it back.
	third := make(chan bool, 1)
	go func() { third <- l.acquire(ctx) }()
	for {
		l.mu.Lock()
		waiting := l.waiting
		l.mu.Unlock()
		if waiting == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !l.lower(1) || l.lower(3) {
		t.Fatal("lower(1) then lower(3): want true, false")
	}
	l.release()
	select {
	case <-third:
		t.Fatal("a slot was given while one ran under a limit of one")
	case <-time.After(50 * time.Millisecond):
	}
	l.release()
	if !<-third {
		t.Fatal("no slot once none ran")
	}
	// With nothing waiting, lowering holds nothing back.
	if newLimiter(4).lower(2) {
		t.Fatal("lower reported runs held back when none waited")
	}
}

// A session is open once its opening request is answered with a result:
// one refused (an error, or nothing) never opened.
func TestOpeningAnswer(t *testing.T) {
	req := wire.Event{Dir: wire.ToServer.String(), Kind: "request", Method: "initialize", ID: "0"}
	for _, tc := range []struct {
		name   string
		events []wire.Event
		want   bool
	}{
		{"answered", []wire.Event{req, {Dir: wire.ToClient.String(), Kind: "response", ID: "0"}}, true},
		{"refused", []wire.Event{req, {Dir: wire.ToClient.String(), Kind: "error", ID: "0"}}, false},
		{"another answered", []wire.Event{req, {Dir: wire.ToClient.String(), Kind: "response", ID: "1"}}, false},
		{"never asked", []wire.Event{{Dir: wire.ToClient.String(), Kind: "response", ID: "0"}}, false},
		{"discover", []wire.Event{{Dir: wire.ToServer.String(), Kind: "request", Method: "server/discover", ID: "7"}, {Dir: wire.ToClient.String(), Kind: "response", ID: "7"}}, true},
	} {
		var o openingAnswer
		for i := range tc.events {
			o.see(&tc.events[i])
		}
		if o.answered != tc.want {
			t.Errorf("%s: answered = %v, want %v", tc.name, o.answered, tc.want)
		}
	}
}

// Interrupted (^C) once the runs side by side have ended, a run that was
// to be made again alone is not: started then, it would be stopped at
// once, and its verdict would read as the target's doing. The first run
// stands, and its notes say so.
func TestMatrixInterruptedMakesNothingAgain(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var found atomic.Int32
	c := &countingRuns{find: func(sc string, nth int) []reports.Finding {
		defer func() {
			if found.Add(1) == 2 {
				cancel() // both first runs are done
			}
		}()
		if sc == "slow" {
			return []reports.Finding{hangFinding(sc)}
		}
		return nil
	}}
	m := matrix{n: 4, baseline: faults.Baseline, scenarios: scenarioNames("slow"),
		host: &twoCores, cpu: cpuAt(0.3), run: c.run, unusable: func(*scenarioRun) bool { return false }}
	_, runs, err := m.runMatrix(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"baseline": 1, "slow": 1}, c.runs); diff != "" {
		t.Errorf("runs made (-want +got):\n%s", diff)
	}
	if len(runs[0].verdict.Findings) != 1 || !slices.ContainsFunc(runs[0].result.Notes, func(n string) bool { return strings.Contains(n, "interrupted") }) {
		t.Errorf("slow: %d findings, notes %q; want its hang, and a note that it was not made again because of the interruption", len(runs[0].verdict.Findings), runs[0].result.Notes)
	}
}
