package suite

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/machine"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
)

// matrix is one run of a scenario matrix: the baseline and the fault
// scenarios, side by side or one at a time.
type matrix struct {
	// n is --parallel: how many runs at most go at once, 0 to let the
	// machine decide (sizeParallel), at perCore runs a core (0:
	// autoPerCore).
	n, perCore int
	baseline   faults.Scenario
	scenarios  []faults.Scenario
	progress   Progress
	run        func(context.Context, faults.Scenario) (*scenarioRun, error)
	// unusable says the baseline could not test the target (it did not
	// start or initialize): the scenarios running beside it are stopped,
	// and nothing but the baseline is returned.
	unusable func(base *scenarioRun) bool

	// host sizes the matrix and cpu measures how busy it is; both are
	// the real machine's unless a test sets them.
	host *host
	cpu  func() (machine.CPUSample, bool)

	mu sync.Mutex
	// notes say how the matrix ran when that is worth knowing (capped,
	// lowered, runs made again alone); they go with the baseline's.
	notes []string
	// shown are the runs the progress display was told of that have not
	// ended for it.
	shown map[string]bool
}

// attempt is one run of a scenario and what the matrix knows of it.
type attempt struct {
	r    *scenarioRun
	err  error
	took time.Duration
	// busy is the share of the machine's CPU in use while it ran, and
	// busyKnown whether it could be measured.
	busy      float64
	busyKnown bool
	// beside says other runs may have gone while it ran.
	beside bool
}

func (m *matrix) note(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notes = append(m.notes, fmt.Sprintf(format, args...))
}

// runMatrix runs the baseline and the scenarios. One at a time, the
// baseline runs alone first, as it always did. Side by side, it runs
// beside the scenarios from the start: every scenario runs its own fresh
// server (or client), so nothing but the baseline's role as the reference
// of what a fault adds holds them apart, and that role is played after
// all have ended. Waiting for it first made a matrix take the baseline's
// time plus the longest scenario's. The runs come back in the scenarios'
// order; the progress display hears of each as it starts and ends, a
// scenario's end once the baseline's findings are known (its own findings
// are those beyond them).
//
// Side by side, a run is made again alone when what it found may be the
// neighbours' doing rather than the target's: a finding of a scenario that
// depends on time (a hang, a slow exit), or one of the baseline's made
// while the machine was busy, or a session that never opened although the baseline's did (a target that
// takes one session at a time; the runs not yet started then go one at a
// time). The run alone stands, and its notes say why it was made.
func (m *matrix) runMatrix(ctx context.Context) (base *scenarioRun, runs []*scenarioRun, err error) {
	// --scenario baseline (the repro line of a baseline finding) selects
	// the run that always happens.
	scenarios := slices.DeleteFunc(slices.Clone(m.scenarios), func(sc faults.Scenario) bool { return sc.Name == faults.Baseline.Name })
	mc := thisHost()
	if m.host != nil {
		mc = *m.host
	}
	if m.cpu == nil {
		m.cpu = machine.ReadCPU
	}
	n, capped := sizeParallelPer(m.n, len(scenarios)+1, cmp.Or(m.perCore, autoPerCore), mc)
	if capped != "" {
		m.note("%s", capped)
	}
	if n <= 1 {
		return m.oneAtATime(ctx, scenarios)
	}
	return m.sideBySide(ctx, scenarios, n, mc)
}

// oneAtATime runs the baseline, then each scenario, alone.
func (m *matrix) oneAtATime(ctx context.Context, scenarios []faults.Scenario) (*scenarioRun, []*scenarioRun, error) {
	m.started(m.baseline.Name)
	b := m.attempt(ctx, m.baseline, false)
	m.finished(m.baseline.Name, b, nil)
	if b.err != nil || m.unusable(b.r) {
		return b.r, nil, b.err
	}
	runs, err := m.alone(ctx, scenarios, b.r)
	return b.r, runs, err
}

// alone runs scenarios one after another against the baseline base.
func (m *matrix) alone(ctx context.Context, scenarios []faults.Scenario, base *scenarioRun) ([]*scenarioRun, error) {
	var runs []*scenarioRun
	for _, sc := range scenarios {
		m.started(sc.Name)
		a := m.attempt(ctx, sc, false)
		m.finished(sc.Name, a, base)
		if a.err != nil {
			return nil, a.err
		}
		runs = append(runs, a.r)
	}
	return runs, nil
}

func (m *matrix) sideBySide(ctx context.Context, scenarios []faults.Scenario, n int, mc host) (*scenarioRun, []*scenarioRun, error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lim := newLimiter(n)
	// The baseline takes its slot before any scenario can.
	lim.acquire(runCtx)
	m.started(m.baseline.Name)
	var b attempt
	// final says the baseline of this first pass stands: it was usable,
	// and nothing it found is to be made again alone.
	final := func() bool {
		return b.err == nil && !m.unusable(b.r) && m.again(b, nil) == ""
	}
	baseDone := make(chan struct{})
	go func() {
		defer close(baseDone)
		b = m.attempt(runCtx, m.baseline, true)
		lim.release()
		if b.err != nil || m.unusable(b.r) {
			cancel()
			return
		}
		if busy(b) && b.busyKnown && lim.lower(mc.cores) {
			m.note("the machine was busy while the baseline ran (%.0f%% of its CPU): the runs still to start went at most %d at once, one a core", 100*b.busy, mc.cores)
		}
		if final() {
			m.finished(m.baseline.Name, b, nil)
		}
	}()
	tries := make([]attempt, len(scenarios))
	whys := make([]string, len(scenarios))
	var oneSession sync.Once
	var wg sync.WaitGroup
	for i, sc := range scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !lim.acquire(runCtx) {
				tries[i].err = runCtx.Err()
				return
			}
			m.started(sc.Name)
			tries[i] = m.attempt(runCtx, sc, true)
			lim.release()
			if tries[i].err == nil && noSession(tries[i].r) {
				<-baseDone
				if final() && !noSession(b.r) {
					oneSession.Do(func() {
						held := ""
						if lim.lower(1) {
							held = "the runs still to start went one at a time, and "
						}
						m.note("%s could not open its session beside other runs, although the baseline did: the target may take one session at a time, so %sthose that could not open theirs were made again alone", sc.Name, held)
					})
				}
			}
			<-baseDone
			if !final() {
				return // told once the baseline is made again, or never
			}
			if whys[i] = m.again(tries[i], b.r); whys[i] == "" {
				m.finished(sc.Name, tries[i], b.r)
			}
		}()
	}
	wg.Wait()
	<-baseDone
	if b.err != nil {
		return nil, nil, b.err
	}
	if m.unusable(b.r) {
		return m.baselineAlone(ctx, scenarios)
	}
	if why := m.again(b, nil); why != "" {
		m.note("the baseline was made again alone: %s", why)
		b = m.attempt(ctx, m.baseline, false)
		if b.err != nil || m.unusable(b.r) {
			m.finished(m.baseline.Name, b, nil)
			return b.r, nil, b.err
		}
		m.finished(m.baseline.Name, b, nil)
		for i := range tries {
			if whys[i] = m.again(tries[i], b.r); whys[i] == "" {
				m.finished(scenarios[i].Name, tries[i], b.r)
			}
		}
	}
	runs := make([]*scenarioRun, len(scenarios))
	for i, sc := range scenarios {
		switch {
		case whys[i] != "" && ctx.Err() != nil:
			// Interrupted: a run made again now would be stopped at
			// once, and say so as if the target had done it.
			if tries[i].err == nil {
				tries[i].r.result.Notes = append(tries[i].r.result.Notes, "to be made again alone after running beside others, but the run was interrupted first: "+whys[i])
			}
			m.finished(sc.Name, tries[i], b.r)
		case whys[i] != "":
			a := m.attempt(ctx, sc, false)
			if a.err == nil {
				a.r.result.Notes = append(a.r.result.Notes, "made again alone after running beside others: "+whys[i])
			}
			tries[i] = a
			m.finished(sc.Name, a, b.r)
		}
		if tries[i].err != nil {
			return nil, nil, tries[i].err
		}
		runs[i] = tries[i].r
	}
	return b.r, runs, nil
}

// baselineAlone follows a baseline that could not test the target while
// the scenarios started beside it: it is made again alone, and if then it
// can, the target takes one session at a time and the matrix runs so.
func (m *matrix) baselineAlone(ctx context.Context, scenarios []faults.Scenario) (*scenarioRun, []*scenarioRun, error) {
	b := m.attempt(ctx, m.baseline, false)
	if b.err != nil || m.unusable(b.r) {
		m.finished(m.baseline.Name, b, nil)
		return b.r, nil, b.err
	}
	m.note("the baseline could not start or initialize the target beside other runs, but did alone: the target takes one session at a time, so the scenarios ran one at a time")
	m.finished(m.baseline.Name, b, nil)
	runs, err := m.alone(ctx, scenarios, b.r)
	return b.r, runs, err
}

// again says why a run made beside others is to be made again alone, or
// "": base is the baseline (nil for the baseline itself).
func (m *matrix) again(a attempt, base *scenarioRun) string {
	if a.err != nil || !a.beside {
		return ""
	}
	if base != nil && noSession(a.r) && !noSession(base) {
		return "it could not open its session beside other runs, although the baseline did"
	}
	// The baseline's own timing findings are confirmed only on a busy
	// machine: a server that never exits on its own (server-everything)
	// would otherwise make every matrix take its baseline's time twice. A
	// scenario's are confirmed whatever the CPU did: neighbours slow more
	// than the CPU (the resolver of servers that call out, the disk), and
	// the re-run costs time only when there is such a finding.
	if base == nil && !busy(a) {
		return ""
	}
	own := a.r.verdict.Findings
	if base != nil {
		own, _ = reports.BeyondBaseline(base.verdict.Findings, own)
	}
	var timed []string
	for _, f := range own {
		if dependsOnTime(f) && !slices.Contains(timed, f.Kind) {
			timed = append(timed, f.Kind)
		}
	}
	if len(timed) == 0 {
		return ""
	}
	load := "could not be measured"
	if a.busyKnown {
		load = fmt.Sprintf("was %.0f%% busy", 100*a.busy)
	}
	return fmt.Sprintf("its %s %s on time, and it ran beside others (the machine's CPU %s)",
		strings.Join(timed, " and "), words.Plural(len(timed), "finding depends", "findings depend"), load)
}

// dependsOnTime says a finding rests on how long the peer took (to answer,
// to exit), which neighbours on a busy machine lengthen.
func dependsOnTime(f reports.Finding) bool {
	return f.Kind == reports.KindHang || f.Kind == reports.KindZombie
}

// busy says the run went on a busy machine, or one whose load is unknown.
func busy(a attempt) bool {
	return a.beside && (!a.busyKnown || a.busy >= busyThreshold)
}

// attempt runs a scenario once, measuring the machine's load meanwhile;
// beside says other runs may go at the same time.
func (m *matrix) attempt(ctx context.Context, sc faults.Scenario, beside bool) attempt {
	w := machine.StartWindow(m.cpu)
	start := time.Now()
	r, err := m.run(ctx, sc)
	a := attempt{r: r, err: err, took: time.Since(start), beside: beside}
	a.busy, a.busyKnown = w.Busy()
	return a
}

// started tells the progress display a run started, once: a run made
// again alone, or one that ran beside a baseline that was then made again,
// has not ended for the display.
func (m *matrix) started(name string) {
	if m.progress == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shown == nil {
		m.shown = map[string]bool{}
	}
	if !m.shown[name] {
		m.shown[name] = true
		m.progress.Started(name)
	}
}

// finished tells the progress display a run ended; base is the baseline
// the run's own findings are counted beyond (nil for the baseline).
func (m *matrix) finished(name string, a attempt, base *scenarioRun) {
	if m.progress == nil {
		return
	}
	m.mu.Lock()
	delete(m.shown, name)
	m.mu.Unlock()
	if a.err != nil {
		m.progress.Finished(name, reports.OutcomeError, 0, a.took)
		return
	}
	own := a.r.verdict.Findings
	if base != nil {
		own, _ = reports.BeyondBaseline(base.verdict.Findings, own)
	}
	m.progress.Finished(name, reports.ScenarioOutcome(own, a.r.result.Indeterminate), len(own), a.took)
}

// noSession says a run never opened its MCP session (the probe never
// initialized; the server never answered the client program's opening
// request): beside other runs, that is what a target that takes one
// session at a time does.
func noSession(r *scenarioRun) bool { return !r.opened }
