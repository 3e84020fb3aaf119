package suite

import (
	"context"
	"encoding/json"
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
	t := &Trials{o: o}
	var seen messageLog
	base, err := o.runScenarioLogged(ctx, faults.Baseline, func(l *sessionLog) { l.messages = &seen })
	if err != nil {
		return nil, err
	}
	t.messages = seen.out
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
	own, known := reports.BeyondBaseline(t.base.verdict.Findings, r.verdict.Findings)
	if known > 0 {
		r.result.Notes = append(r.result.Notes, reports.KnownNote(known))
	}
	r.result.Findings = len(own)
	r.result.Outcome = reports.ScenarioOutcome(own, r.result.Indeterminate)
	return Trial{Result: r.result, Findings: own, Decisions: r.decisions, save: r.save}, nil
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
		if strings.Contains(n, NotLanded) {
			return false
		}
	}
	return true
}

// NotLanded is in the indeterminate note of a run whose fault fired but
// could not have its effect.
const NotLanded = "did not land"

// Target is what the runs are made against, for a report.
func (t *Trials) Target() reports.Target {
	tg := reports.Target{Command: t.o.Command}
	if t.o.URL != nil {
		tg.URL = t.o.URL.Redacted()
	}
	return tg
}
