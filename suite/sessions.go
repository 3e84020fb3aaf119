package suite

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/crosssession"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/httpconn"
	"github.com/mcpchaos/mcpchaos/internal/machine"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// withSessions gives every scenario of several sessions n of them (--sessions),
// leaving the scenarios of one session as they are; n 0 keeps each
// scenario's own.
func withSessions(scs []faults.Scenario, n int) []faults.Scenario {
	if n <= 0 {
		return scs
	}
	out := make([]faults.Scenario, len(scs))
	for i, sc := range scs {
		if sc.Sessions() > 1 {
			sc.Workload.Sessions = n
		}
		out[i] = sc
	}
	return out
}

// runSessions runs a scenario of several sessions: one server (started
// once, when there is a command), a proxy for each session in front of it,
// each recording that session's transcript under that session's share of
// the plan, and a probe client for each, all at once, every one numbering
// its requests from 1 and carrying its own marker. Each session is judged
// on its own, and the check across sessions (package crosssession) reads
// them side by side.
func (o Options) runSessions(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
	parsed, err := sc.Parse()
	if err != nil {
		return nil, err
	}
	n := sc.Sessions()
	seed := seedFor(sc, o.Seed)
	deadline := deadlineFor(sc, o.Deadline)
	maxDeadline := max(o.MaxDeadline, deadline)
	repro := ""
	if o.Repro != nil {
		repro = o.Repro(sc.Selector(), seed)
	}
	logs, err := newSessionLogs(o.TranscriptDir, sc.Name, "s", n)
	if err != nil {
		return nil, err
	}
	for _, l := range logs.logs {
		l.secrets = newSecretWatch(o.Header)
	}
	tee := teeRecorder(logs.logs)
	load := machine.StartSampler(func(share float64) {
		tee.Record(wire.Event{Type: wire.EventCPUShare, CPUShare: int(math.Round(share * 1000))})
	})
	sessions := make([]sessionSetup, n)
	// The first session sets its log level before the others set theirs
	// (probe.Config.LevelAfter).
	firstLevel := make(chan struct{})
	var firstLevelOnce sync.Once
	firstLevelSet := func() { firstLevelOnce.Do(func() { close(firstLevel) }) }
	unfaulted := false
	for k := 1; k <= n; k++ {
		unfaulted = unfaulted || len(faults.SessionFaults(parsed, k)) == 0
	}
	for i := range sessions {
		k := i + 1
		sessions[i] = sessionSetup{k: k, marker: crosssession.Marker(seed, k),
			plan: faults.NewPlan(seed, faults.SessionFaults(parsed, k), faults.InSession(k)), log: logs.logs[i]}
		sessions[i].probe = o.probeConfig(sc, deadline, maxDeadline)
		sessions[i].probe.Share = load.Share
		sessions[i].probe.Marker, sessions[i].probe.Session = sessions[i].marker, k
		if k == 1 {
			sessions[i].probe.LevelSet = firstLevelSet
		} else {
			sessions[i].probe.LevelAfter = firstLevel
		}
		if unfaulted && len(faults.SessionFaults(parsed, i+1)) > 0 {
			logs.logs[i].struck = make(chan struct{})
		}
	}
	start := time.Now()
	ds, err := o.driveSessions(ctx, sc, sessions, tee, sessionFacts{deadline: deadline, maxDeadline: maxDeadline, repro: repro})
	load.Stop()
	if err != nil {
		logs.abandon()
		return nil, err
	}
	took := time.Since(start)
	judged, err := logs.finish()
	if err != nil {
		return nil, err
	}
	if o.observe != nil {
		o.observe(sc.Name, judged.decisions)
	}
	first := ds[0]
	run := &scenarioRun{decisions: judged.decisions, probeErr: first.probeErr, stderr: logs.logs[0].stderr.list(),
		refused: first.refused, verdict: judged.verdict, probe: first.outcome, opened: first.outcome != nil && first.outcome.Initialized}
	ApplyExpectation(sc, seed, repro, &run.verdict)
	run.result = reports.ScenarioResult{
		Name: sc.Name, Seed: seed, DurationMS: took.Milliseconds(),
		Findings: len(run.verdict.Findings), Indeterminate: run.verdict.Indeterminate, Notes: run.verdict.Notes,
	}
	judged.describe(&run.result)
	run.result.Outcome = reports.ScenarioOutcome(run.verdict.Findings, run.result.Indeterminate)
	run.save = o.caseSaver(sc, seed, deadline, judged.decisions)
	return run, nil
}

// sessionSetup is one session of a run of several.
type sessionSetup struct {
	k      int
	marker string
	plan   *faults.Plan
	log    *sessionLog
	probe  probe.Config
}

// sessionFacts are what every session's record says alike.
type sessionFacts struct {
	deadline, maxDeadline time.Duration
	repro                 string
}

// driveSessions starts the server and a proxy per session, runs the
// sessions' probes at once, and stops it all once every probe is done.
func (o Options) driveSessions(ctx context.Context, sc faults.Scenario, sessions []sessionSetup, tee chaos.Recorder, f sessionFacts) ([]driven, error) {
	n := len(sessions)
	cfgs := make([]httpchaos.Config, n)
	for i, s := range sessions {
		cfgs[i] = httpchaos.Config{
			Upstream: o.URL, URLTemplate: o.urlTemplate(), Plan: s.plan, Recorder: s.log.rec,
			Tool: o.Tool, Scenario: sc.Name, Role: "server", Repro: f.repro,
			Deadline: f.deadline, MaxDeadline: f.maxDeadline, Grace: o.Grace,
			Session: s.k, Sessions: n, Marker: s.marker,
		}
	}
	g, err := startGroup(ctx, cfgs, o.server(), o.startTimeout(), tee, sessions[0].log.stderr.list)
	if err != nil {
		return nil, err
	}

	probeCtx, cancelProbes := context.WithCancelCause(ctx)
	watched := (&proxied{served: g.served}).endProbeIfServerDies(probeCtx, cancelProbes)
	ds := make([]driven, n)
	var running, probes sync.WaitGroup
	for i, s := range sessions {
		pr := g.proxies[i]
		pipe, err := httpconn.Dial(httpconn.Config{URL: &pr.front, Header: o.Header})
		if err != nil {
			cancelProbes(nil)
			running.Wait()
			<-watched
			g.stop("a probe could not dial its proxy")
			return nil, err
		}
		pc := s.probe
		pc.Overdue = func(id, method string) {
			probes.Go(func() { pr.px.Probe(fmt.Sprintf("request %s (%s) unanswered after %s", id, method, f.deadline)) })
		}
		sessionCtx, cancelSession := context.WithCancel(probeCtx)
		if s.log.struck != nil {
			running.Go(func() { endStruck(sessionCtx, cancelSession, s.log.struck) })
		}
		running.Go(func() {
			defer cancelSession()
			if pc.LevelSet != nil {
				// A probe that ended before its setLevel holds no one up.
				defer pc.LevelSet()
			}
			d := &ds[i]
			d.outcome, d.probeErr = probe.Run(sessionCtx, pc, pipe.Reader(), pipe.Writer())
			d.refused = pipe.Refused()
		})
	}
	running.Wait()
	for i := range ds {
		if context.Cause(probeCtx) == errServerGone && ds[i].outcome != nil && ds[i].outcome.Initialized {
			ds[i].probeErr = nil
		}
	}
	cancelProbes(nil)
	<-watched
	var idle sync.WaitGroup
	for _, pr := range g.proxies {
		idle.Go(func() { pr.px.WaitIdle(clientGoneWait) })
	}
	idle.Wait()
	g.stop("the probe clients ended their sessions")
	probes.Wait()
	return ds, nil
}

// struckLinger is how long the probe of a session a fault struck goes on
// once the fault fired, in a run where other sessions have no fault: long
// enough for what the fault did to that session to be recorded. What the
// scenario tests is the other sessions, and the server; that session's
// own view (its calls cut off, a 404 after its DELETE) is the one-session
// scenarios' to judge, and its probe waiting out the deadline of every call
// the fault cut off added 8 s to a scenario that took 1 s.
const struckLinger = time.Second

// endStruck ends a struck session's probe struckLinger after its fault
// fired, or returns when the session ends first.
func endStruck(ctx context.Context, cancel context.CancelFunc, struck <-chan struct{}) {
	select {
	case <-struck:
	case <-ctx.Done():
		return
	}
	t := time.NewTimer(struckLinger)
	defer t.Stop()
	select {
	case <-t.C:
		cancel()
	case <-ctx.Done():
	}
}

// sessionGroup is one server and the proxies of its sessions.
type sessionGroup struct {
	served  *chaos.Served
	proxies []*proxied
}

// startGroup makes a proxy per session (cfgs, one each), starts the server
// from command when there is one (its events recorded by tee, in every
// session's record), and serves the proxies on loopback ports.
func startGroup(ctx context.Context, cfgs []httpchaos.Config, command serverCommand, startTimeout time.Duration, tee chaos.Recorder, stderr func() []string) (*sessionGroup, error) {
	g := &sessionGroup{}
	sig := &servedSignaller{}
	for _, cfg := range cfgs {
		if len(command.argv) > 0 {
			cfg.Signaller = sig
		}
		px, err := httpchaos.New(cfg)
		if err != nil {
			g.stop("a proxy could not be made")
			return nil, err
		}
		g.proxies = append(g.proxies, &proxied{px: px, done: make(chan struct{})})
	}
	if len(command.argv) > 0 {
		served, err := startServed(ctx, command, cfgs[0], tee, startTimeout, stderr)
		if err != nil {
			g.stop("the server could not be started")
			return nil, err
		}
		g.served, sig.served = served, served
	}
	for i, pr := range g.proxies {
		if err := pr.listen(cfgs[i].Upstream); err != nil {
			g.stop("a proxy could not listen")
			return nil, err
		}
	}
	return g, nil
}

// sessionLogs are the logs of the sessions of one run, and the check across
// them that their events feed.
type sessionLogs struct {
	logs  []*sessionLog
	cross *crosssession.Judge
}

// newSessionLogs starts the log of each of n sessions of scenario name,
// its transcript NAME-<tag>K.jsonl in dir when dir is set.
func newSessionLogs(dir, name, tag string, n int) (*sessionLogs, error) {
	s := &sessionLogs{cross: crosssession.New(n)}
	for i := range n {
		log, err := newSessionLog(dir, fmt.Sprintf("%s-%s%d", name, tag, i+1))
		if err != nil {
			s.abandon()
			return nil, err
		}
		k := i + 1
		log.also = func(e wire.Event) { s.cross.Add(k, e) }
		s.logs = append(s.logs, log)
	}
	return s, nil
}

// abandon closes the logs of a run that could not be made.
func (s *sessionLogs) abandon() {
	for _, l := range s.logs {
		_, _ = l.finish()
	}
}

// judgedSessions is what the logs of a run of several sessions give once
// finished: the verdict across them, what the faults did in each, and the
// transcripts.
type judgedSessions struct {
	verdict   judge.Verdict
	decisions []faults.Decision
	paths     []string
	n         int
}

// finish finishes every session's log and judges them side by side.
func (s *sessionLogs) finish() (judgedSessions, error) {
	j := judgedSessions{n: len(s.logs)}
	verdicts := make([]judge.Verdict, len(s.logs))
	for i, l := range s.logs {
		v, err := l.finish()
		if err != nil {
			return j, err
		}
		verdicts[i] = v
		j.decisions = append(j.decisions, l.decisions.out...)
		if l.path != "" {
			j.paths = append(j.paths, l.path)
		}
	}
	j.verdict = s.cross.Verdict(verdicts)
	return j, nil
}

// describe puts the sessions and their transcripts in a scenario's result.
func (j judgedSessions) describe(res *reports.ScenarioResult) {
	res.Sessions, res.Transcripts = j.n, j.paths
	if len(j.paths) > 0 {
		res.Transcript = j.paths[0]
	}
}

// stop stops the server while every proxy still records, so that its exit
// and last words are in every session's record, then ends the proxies.
func (g *sessionGroup) stop(why string) {
	for _, pr := range g.proxies {
		pr.px.HangUpIdle()
	}
	if g.served != nil {
		g.served.Stop(why)
	}
	for _, pr := range g.proxies {
		pr.px.Close(why)
		if pr.srv != nil {
			pr.srv.Close()
			<-pr.done
		}
	}
}

// teeRecorder records the events of what the sessions share (the server's
// process, its stderr, the machine's load) in every session's record, so
// that each session's judge sees the server it talked to.
type teeRecorder []*sessionLog

func (t teeRecorder) Record(e wire.Event) int64 {
	var seq int64
	for i, l := range t {
		s := l.rec.Record(e)
		if i == 0 {
			seq = s
		}
	}
	return seq
}

func (t teeRecorder) Now() int64 { return t[0].rec.Now() }
