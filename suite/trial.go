package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Trials runs scenarios against one target one by one, each judged on its
// own against the target's baseline: the runs of mcpchaos explore, which
// decides what to run next from what the runs before it found. Run may be
// called from several goroutines at once.
type Trials struct {
	o    Options
	base *scenarioRun
	// messages are the baseline's, in the order the relay received them.
	messages []Message
}

// Message is one message of the baseline session, as the relay received
// it: what a fault's trigger can name.
type Message struct {
	Dir    string // c2s or s2c
	Kind   string // request, response, notification
	Method string // a response's is the method of the request it answers
	// Tool is the tool a tools/call names, on the request and its answer.
	Tool string
}

// Trial is one judged run.
type Trial struct {
	Result reports.ScenarioResult
	// Findings are the run's own: for a fault scenario, those beyond the
	// baseline's.
	Findings  []reports.Finding
	Decisions []faults.Decision
	save      func(own []reports.Finding) error
}

// SaveCase writes the run as a regression case into Options.CaseDir, with
// its findings; it does nothing without a CaseDir.
func (t Trial) SaveCase() error {
	if t.save == nil {
		return nil
	}
	return t.save(t.Findings)
}

// NewTrials checks the target as Run does and runs its baseline. A target
// that cannot get through its baseline session is a *SetupError.
func NewTrials(ctx context.Context, o Options) (*Trials, error) {
	if err := o.prepare(ctx, nil); err != nil {
		return nil, err
	}
	var seen messageLog
	base, err := retryPort(o, Options.onFreshPort, o.PortPerRun, func(run Options) (*scenarioRun, error) {
		seen = messageLog{}
		return run.runScenarioLogged(ctx, faults.Baseline, func(l *sessionLog) { l.messages = &seen })
	})
	if err != nil {
		return nil, err
	}
	if o.discoverKilled(base) {
		// Searched in the stateful era, as Run's matrix then runs.
		discover := base
		o = o.stateful()
		if base, err = retryPort(o, Options.onFreshPort, o.PortPerRun, func(run Options) (*scenarioRun, error) {
			seen = messageLog{}
			return run.runScenarioLogged(ctx, faults.Baseline, func(l *sessionLog) { l.messages = &seen })
		}); err != nil {
			return nil, err
		}
		if err := afterDiscover(discover, base); err != nil {
			return nil, err
		}
	}
	t := &Trials{o: o, messages: seen.out}
	if err := o.baselineFailed(base); err != nil {
		return nil, err
	}
	workloadHints(base, o.Deadline)
	base.result.Outcome = reports.ScenarioOutcome(base.verdict.Findings, base.result.Indeterminate)
	t.base = base
	return t, nil
}

// Baseline is the baseline's run.
func (t *Trials) Baseline() Trial {
	return Trial{Result: t.base.result, Findings: t.base.verdict.Findings, Decisions: t.base.decisions}
}

// Messages are the messages of the baseline session.
func (t *Trials) Messages() []Message { return t.messages }

// HTTP says the target is reached over HTTP.
func (t *Trials) HTTP() bool { return t.o.URL != nil }

// Slots is how many runs may go at once for a search of runs runs: what
// --parallel asked for, or what the machine holds, and a note when the
// machine capped what was asked.
func (t *Trials) Slots(runs int) (int, string) {
	return sizeParallel(t.o.Parallel, runs, thisHost())
}

// Check refuses scenarios the target's transport cannot run.
func (t *Trials) Check(scs ...faults.Scenario) error { return t.o.checkScenarios(scs) }

// Run runs sc against a fresh target and judges it, the probe skipping
// the tools skipTools names besides those the options skip. A finding the
// baseline had too is left to the baseline and counted in a note.
func (t *Trials) Run(ctx context.Context, sc faults.Scenario, skipTools []string) (Trial, error) {
	o := t.o
	if len(skipTools) > 0 {
		o.Probe.SkipTools = append(slices.Clip(o.Probe.SkipTools), skipTools...)
	}
	r, err := o.runScenario(ctx, sc)
	if err != nil {
		return Trial{}, err
	}
	scenarioHints(r, t.o.Deadline)
	return beyond(t.base, r), nil
}

// beyond is run r as a trial, its findings those the baseline did not have.
func beyond(base, r *scenarioRun) Trial {
	own, known := reports.BeyondBaseline(base.verdict.Findings, r.verdict.Findings)
	if known > 0 {
		r.result.Notes = append(r.result.Notes, reports.KnownNote(known))
	}
	r.result.Findings = len(own)
	r.result.Outcome = reports.ScenarioOutcome(own, r.result.Indeterminate)
	return Trial{Result: r.result, Findings: own, Decisions: r.decisions, save: r.save}
}

// ClientTrials runs scenarios against a client program one by one, as
// Trials does against a server: the runs of mcpchaos explore-client.
type ClientTrials struct {
	o        ClientOptions
	work     string
	base     *scenarioRun
	messages []Message
}

// NewClientTrials checks the client and its server as RunClient does and
// runs the baseline. A client that cannot get through its baseline (it
// does not start the server, opens no session) is a *SetupError; one that
// fails it is a finding, the baseline's. Close removes what the runs kept.
func NewClientTrials(ctx context.Context, o ClientOptions) (*ClientTrials, error) {
	work, err := o.prepare(ctx, nil)
	if err != nil {
		return nil, err
	}
	t := &ClientTrials{o: o, work: work}
	// The baseline's transcript gives the messages; kept only if asked.
	bo := o
	if bo.TranscriptDir == "" {
		bo.TranscriptDir = filepath.Join(work, "baseline")
		if err := os.MkdirAll(bo.TranscriptDir, 0o755); err != nil {
			t.Close()
			return nil, err
		}
	}
	sc := faults.Baseline
	sc.Expect = "success"
	base, err := bo.runClientScenario(ctx, sc, work)
	if err != nil {
		t.Close()
		return nil, err
	}
	if !o.keepTranscript() {
		base.result.Transcript = ""
	}
	var seen messageLog
	f, err := os.Open(filepath.Join(bo.TranscriptDir, sc.Name+".jsonl"))
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("reading the baseline's transcript: %w", err)
	}
	err = wire.ReadTranscript(f, func(e wire.Event) error { seen.see(&e); return nil })
	f.Close()
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("reading the baseline's transcript: %w", err)
	}
	base.result.Outcome = reports.ScenarioOutcome(base.verdict.Findings, base.result.Indeterminate)
	t.base, t.messages = base, seen.out
	return t, nil
}

func (o ClientOptions) keepTranscript() bool { return o.TranscriptDir != "" }

// Close removes the work directory of the runs.
func (t *ClientTrials) Close() { os.RemoveAll(t.work) }

// Baseline is the baseline's run.
func (t *ClientTrials) Baseline() Trial {
	return Trial{Result: t.base.result, Findings: t.base.verdict.Findings, Decisions: t.base.decisions}
}

// Messages are the messages of the baseline session.
func (t *ClientTrials) Messages() []Message { return t.messages }

// HTTP says the client talks to its server over HTTP.
func (t *ClientTrials) HTTP() bool { return t.o.ServerURL != nil }

// Slots is as Trials.Slots.
func (t *ClientTrials) Slots(runs int) (int, string) {
	return sizeParallel(t.o.Parallel, runs, thisHost())
}

// Target is the client under test, for a report.
func (t *ClientTrials) Target() reports.Target {
	tg := reports.Target{Command: t.o.Client, Role: reports.RoleClient, Server: t.o.Server}
	if t.o.ServerURL != nil {
		tg.URL = t.o.ServerURL.Redacted()
		if t.o.PortPerRun {
			tg.URL = URLTemplate(t.o.ServerURL)
		}
	}
	return tg
}

// Run runs the client program under sc and judges it (the client makes its
// own workload: skipTools is not for it).
func (t *ClientTrials) Run(ctx context.Context, sc faults.Scenario, _ []string) (Trial, error) {
	if err := checkClientScenarios([]faults.Scenario{sc}); err != nil {
		return Trial{}, err
	}
	r, err := t.o.runClientScenario(ctx, sc, t.work)
	if err != nil {
		return Trial{}, err
	}
	return beyond(t.base, r), nil
}

// messageLog collects the messages a session's relay received, without
// their bytes.
type messageLog struct {
	out []Message
	// requests are the method and tool of each request by direction and
	// id, which a response is recorded without.
	requests map[string]Message
}

func (m *messageLog) see(e *wire.Event) {
	if e.Type != wire.EventReceived || e.Kind == "" {
		return
	}
	msg := Message{Dir: e.Dir, Kind: e.Kind, Method: e.Method}
	switch e.Kind {
	case "request":
		if e.Method == "tools/call" {
			var call struct {
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if b, err := e.Bytes(); err == nil && json.Unmarshal(b, &call) == nil {
				msg.Tool = call.Params.Name
			}
		}
		if m.requests == nil {
			m.requests = map[string]Message{}
		}
		m.requests[e.Dir+" "+e.ID] = msg
	case "response", "error":
		if req, ok := m.requests[oppositeDir(e.Dir)+" "+e.ID]; ok {
			msg.Method, msg.Tool = req.Method, req.Tool
		}
	}
	m.out = append(m.out, msg)
}

func oppositeDir(dir string) string {
	if dir == wire.ToServer.String() {
		return wire.ToClient.String()
	}
	return wire.ToServer.String()
}

// Fired says a fault of the run's plan acted.
func (t Trial) Fired() bool { return faultFired(t.Result.Indeterminate) }

// Landed says a fault of the run's plan acted and could have its effect:
// one that fired on a moment it could not use (an id no request in flight
// held) is not counted as a run that tested anything.
func (t Trial) Landed() bool {
	if !t.Fired() {
		return false
	}
	for _, n := range t.Result.Indeterminate {
		if strings.Contains(n, wire.NotLanded) {
			return false
		}
	}
	return true
}

// Target is what the runs are made against, for a report.
func (t *Trials) Target() reports.Target {
	tg := reports.Target{Command: t.o.Command}
	if t.o.URL != nil {
		tg.URL = t.o.shownURL()
	}
	return tg
}
