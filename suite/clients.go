package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
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
	logs, err := newSessionLogs(o.TranscriptDir, sc.Name, "c", n)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	drives, err := o.driveHTTPClients(ctx, sc, parsed, seed, logs.logs, deadline, hangAfter, repro)
	if err != nil {
		logs.abandon()
		return nil, err
	}
	judged, err := logs.finish()
	if err != nil {
		return nil, err
	}
	var stderr []string
	opened := true
	for _, l := range logs.logs {
		stderr = append(stderr, l.clientStderr.list()...)
		opened = opened && l.served.answered
	}
	if sc.Name == faults.Baseline.Name {
		for i, l := range logs.logs {
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
		o.observe(sc.Name, judged.decisions)
	}
	run := clientVerdict(sc, seed, repro, judged.verdict, time.Since(start))
	run.opened = opened
	run.stderr = stderr
	judged.describe(&run.result)
	run.save = o.caseSaver(sc, seed, deadline, hangAfter, judged.decisions)
	return run, nil
}

// driveHTTPClients starts the server and a proxy per copy, runs the copies
// at once, and stops it all once every copy has ended.
func (o ClientOptions) driveHTTPClients(ctx context.Context, sc faults.Scenario, parsed []*faults.Fault, seed uint64, logs []*sessionLog,
	deadline, hangAfter time.Duration, repro string) ([]drive, error) {
	n := len(logs)
	cfgs := make([]httpchaos.Config, n)
	for i, l := range logs {
		k := i + 1
		cfgs[i] = httpchaos.Config{
			Upstream: o.ServerURL, URLTemplate: o.urlTemplate(), Plan: faults.NewPlan(seed, faults.SessionFaults(parsed, k), faults.InSession(k)), Recorder: l.rec,
			Tool: "mcpchaos " + o.Version, Scenario: sc.Name, Role: "client", Repro: repro, Expect: sc.Expect,
			Deadline: deadline, HangAfter: hangAfter, Grace: o.Grace, Session: k, Sessions: n,
		}
	}
	g, err := startGroup(ctx, cfgs, o.server(), o.startTimeout(), teeRecorder(logs), logs[0].stderr.list)
	if err != nil {
		return nil, err
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
