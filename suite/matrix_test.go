package suite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
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
// stops the scenarios running beside it; the matrix returns the baseline
// alone, so that the caller reports the set-up error, and the display hears
// of no scenario's end.
func TestMatrixStopsWhenTheBaselineCannotTest(t *testing.T) {
	progress := &recordedProgress{}
	stopped := make(chan string, 2)
	m := matrix{n: 3, baseline: faults.Baseline, scenarios: scenarioNames("a", "b"), progress: progress,
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
		m := matrix{n: n, baseline: faults.Baseline, scenarios: scenarioNames("a", "b"),
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
