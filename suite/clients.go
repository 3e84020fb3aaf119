package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/crosssession"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// runHTTPClientsScenario runs Clients copies of the client program at once
// against one server (test-client --clients N): the server started once
// when there is a command, a proxy for each copy recording that copy's
// session under its share of the scenario's faults (a fault without
// session= acts in every copy's), each copy given its own proxy's URL. Each
// copy is judged on its own, as one client would be, and the check across
// sessions reads them side by side: one copy's answers delivered to
// another, or a fault confined to one copy harming another.
func (o ClientOptions) runHTTPClientsScenario(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
	parsed, err := sc.Parse()
	if err != nil {
		return nil, err
	}
	n := o.Clients
	seed := seedFor(sc, o.Seed)
	deadline := deadlineFor(sc, o.Deadline)
	hangAfter := o.hangAfterFor(sc, deadline)
	repro := ""
	if o.Repro != nil {
		repro = o.Repro(sc.Selector(), seed)
	}
	cross := crosssession.New(n)
	logs := make([]*sessionLog, n)
	for i := range logs {
		log, err := newSessionLog(o.TranscriptDir, fmt.Sprintf("%s-c%d", sc.Name, i+1))
		if err != nil {
			for _, l := range logs[:i] {
				_, _ = l.finish()
			}
			return nil, err
		}
		k := i + 1
		log.also = func(e wire.Event) { cross.Add(k, e) }
		logs[i] = log
	}
	start := time.Now()
	drives, err := o.driveHTTPClients(ctx, sc, parsed, seed, logs, deadline, hangAfter, repro)
	if err != nil {
		for _, l := range logs {
			_, _ = l.finish()
		}
		return nil, err
	}
	verdicts := make([]judge.Verdict, n)
	var decisions []faults.Decision
	var paths []string
	var stderr []string
	opened := true
	for i, l := range logs {
		v, err := l.finish()
		if err != nil {
			return nil, err
		}
		verdicts[i] = v
		decisions = append(decisions, l.decisions.out...)
		if l.path != "" {
			paths = append(paths, l.path)
		}
		stderr = append(stderr, l.clientStderr.list()...)
		opened = opened && l.served.answered
	}
	if sc.Name == faults.Baseline.Name {
		for i, l := range logs {
			if err := notAClient(drives[i], l); err != nil {
				var setup *SetupError
				if errors.As(err, &setup) {
					setup.Reason = fmt.Sprintf("client %d of %d: %s", i+1, n, setup.Reason)
				}
				return nil, err
			}
		}
	}
	if o.observe != nil {
		o.observe(sc.Name, decisions)
	}
	run := clientVerdict(sc, seed, repro, cross.Verdict(verdicts), time.Since(start))
	run.opened = opened
	run.stderr = stderr
	run.result.Sessions, run.result.Transcripts = n, paths
	if len(paths) > 0 {
		run.result.Transcript = paths[0]
	}
	run.save = o.caseSaver(sc, seed, deadline, hangAfter, decisions)
	return run, nil
}

// driveHTTPClients starts the server and a proxy per copy, runs the copies
// at once, and stops it all once every copy has ended.
func (o ClientOptions) driveHTTPClients(ctx context.Context, sc faults.Scenario, parsed []*faults.Fault, seed uint64, logs []*sessionLog,
	deadline, hangAfter time.Duration, repro string) ([]drive, error) {
	n := len(logs)
	g := &sessionGroup{}
	for i, l := range logs {
		k := i + 1
		px, err := httpchaos.New(httpchaos.Config{
			Upstream: o.ServerURL, Plan: faults.NewPlan(faults.SessionSeed(seed, k), faults.SessionFaults(parsed, k)), Recorder: l.rec,
			Tool: "mcpchaos " + o.Version, Scenario: sc.Name, Role: "client", Repro: repro, Expect: sc.Expect,
			Deadline: deadline, HangAfter: hangAfter, Grace: o.Grace, Session: k, Sessions: n,
		})
		if err != nil {
			g.stop("a proxy could not be made")
			return nil, err
		}
		g.proxies = append(g.proxies, &proxied{px: px, done: make(chan struct{})})
	}
	if len(o.Server) > 0 {
		served, err := startServed(ctx, o.Server, httpchaos.Config{Upstream: o.ServerURL, Grace: o.Grace}, teeRecorder(logs), o.startTimeout(), logs[0].stderr.list)
		if err != nil {
			g.stop("the server could not be started")
			return nil, err
		}
		g.served = served
	}
	for _, pr := range g.proxies {
		if err := pr.listen(o.ServerURL); err != nil {
			g.stop("a proxy could not listen")
			return nil, err
		}
	}
	ds := make([]drive, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, l := range logs {
		pr := g.proxies[i]
		wg.Go(func() {
			record := func(e wire.Event) {
				e.Peer = "client"
				l.rec.Record(e)
			}
			env := append(withoutEnv(os.Environ(), ServerCommandEnv), ServerURLEnv+"="+pr.front.String())
			proc, err := startClient(o.Client, env, record)
			if err != nil {
				errs[i] = err
				return
			}
			proc.await(ctx, deadline, hangAfter, o.Grace, func() {
				go pr.px.ProbeClient("the client program is past its deadline")
			}, func() bool { return !l.opened.Load() })
			proc.finish()
			ds[i].ended = proc.endWords()
			ds[i].connected = pr.px.Exchanges() > 0
		})
	}
	wg.Wait()
	g.stop("the client programs ended")
	return ds, errors.Join(errs...)
}
