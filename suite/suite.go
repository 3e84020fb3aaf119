package suite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/machine"
	"github.com/mcpchaos/mcpchaos/internal/shell"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Defaults for Options fields left zero.
const (
	DefaultDeadline    = 5 * time.Second
	DefaultMaxDeadline = judge.DefaultMaxDeadline
	DefaultGrace       = 3 * time.Second
	// DefaultStartTimeout is long enough for npx or uvx to fetch a server
	// before it listens.
	DefaultStartTimeout = 30 * time.Second
)

// Options says how to run the matrix.
type Options struct {
	// Command is the stdio server to start, or with URL the HTTP server to
	// start before each scenario (none: the server at URL is already up).
	Command []string
	// URL, if set, is the MCP endpoint of an HTTP server (streamable HTTP,
	// or the legacy HTTP+SSE transport): the probe reaches it through the
	// HTTP proxy rather than the stdio relay.
	URL *url.URL
	// Header is sent with every request the probe makes over HTTP
	// (Authorization...).
	Header http.Header
	// StartTimeout bounds how long a started HTTP server may take to
	// listen (default DefaultStartTimeout).
	StartTimeout time.Duration
	Scenarios    []faults.Scenario
	Seed         uint64
	// Deadline is how long a request may stay unanswered before it is
	// probed and, if still unanswered, judged a hang.
	Deadline time.Duration
	// MaxDeadline caps how long progress notifications keep a request
	// waited for (MCP, Lifecycle: Timeouts); 0 is DefaultMaxDeadline.
	MaxDeadline time.Duration
	// Grace is each wait of the shutdown ladder.
	Grace time.Duration
	// Parallel is how many runs of the matrix go at once, the baseline
	// among them; 0 lets the machine decide (its cores and free memory),
	// and 1 runs the baseline alone first, then each scenario alone.
	Parallel int
	// TranscriptDir, if set, receives one JSONL transcript per scenario.
	TranscriptDir string
	Probe         probe.Config
	// Repro renders the command line that replays one scenario with a seed.
	Repro func(scenario string, seed uint64) string
	// StatefulRepro is Repro for a run that fell back to the stateful era
	// because the server failed on server/discover (the line then says
	// --era stateful); nil: Repro.
	StatefulRepro func(scenario string, seed uint64) string
	// Tool is "mcpchaos VERSION", for the report and transcripts.
	Tool    string
	Version string
	// CaseDir, if set, receives a regression case file for every failing
	// fault scenario (see SaveCase).
	CaseDir string
	// Sessions, if set, is how many sessions every scenario of several
	// sessions runs against one server (--sessions); 0 keeps each
	// scenario's own.
	Sessions int
	// Progress, if set, hears of each scenario as it starts and ends.
	Progress Progress
	// PortPerRun says the URL's port (0) and PortPlaceholder in Command
	// stand for a free loopback port picked for each run, also in the
	// server's environment as PORT: every run starts its own server, and
	// the runs go side by side. It needs Command.
	PortPerRun bool

	// runEnv is the environment of the server of one run, and
	// commandTemplate its command with PortPlaceholder (onFreshPort).
	runEnv, commandTemplate []string

	// observe, if set, sees each scenario's fault decisions (ReplayCases
	// compares them with the recorded ones). It may be called concurrently.
	observe func(scenario string, decisions []faults.Decision)
}

// SetupError is a target that cannot be tested: it does not start, exits at
// once, or never completes initialization without faults. Anything it does
// wrong after that is a baseline finding, not a set-up error. The CLI exits 2.
type SetupError struct {
	Reason string
	Stderr []string // the server's stderr during the baseline
	Err    error
	// Whose names the program Stderr is from, when it is not the one under
	// test ("server" under test-client --server-url --server).
	Whose string
	// portTaken says the server's port was held by another process.
	portTaken bool
}

func (e *SetupError) Error() string {
	msg := e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *SetupError) Unwrap() error { return e.Err }

// prepare fills in the defaults and checks what every run of the target
// needs: a command that exists, scenarios its transport can run (scs), a
// reachable URL, the directories asked for.
func (o *Options) prepare(ctx context.Context, scs []faults.Scenario) error {
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.MaxDeadline <= 0 {
		o.MaxDeadline = DefaultMaxDeadline
	}
	if o.Parallel < 0 {
		o.Parallel = 0
	}
	if o.URL == nil {
		if err := chaos.StdioSupported(); err != nil {
			return err
		}
	}
	if o.URL == nil || len(o.Command) > 0 {
		if err := chaos.CheckCommand(o.Command); err != nil {
			return err
		}
	}
	if err := o.checkScenarios(scs); err != nil {
		return err
	}
	if o.URL != nil && o.PortPerRun {
		if len(o.Command) == 0 {
			return &SetupError{Reason: "the URL's port is " + PortPlaceholder + ", but no server command was given", Err: errors.New("mcpchaos picks a port for each run and starts the server on it: give the server's command after --, with " + PortPlaceholder + " or $PORT where it takes its port")}
		}
	} else if o.URL != nil {
		var err error
		if o.Parallel, err = onePort(o.Command, o.Parallel); err != nil {
			return err
		}
		if len(o.Command) == 0 {
			if err := CheckReachable(ctx, o.URL); err != nil {
				return &SetupError{Reason: "the HTTP server cannot be reached", Err: err}
			}
		} else if err := CheckPortFree(ctx, o.URL); err != nil {
			return err
		}
	}
	if o.CaseDir != "" {
		if err := os.MkdirAll(o.CaseDir, 0o755); err != nil {
			return fmt.Errorf("cannot create the case directory: %w", err)
		}
	}
	if o.TranscriptDir != "" {
		if err := os.MkdirAll(o.TranscriptDir, 0o755); err != nil {
			return fmt.Errorf("cannot create the transcript directory: %w", err)
		}
	}
	return nil
}

// checkScenarios refuses scenarios the target's transport cannot run.
func (o *Options) checkScenarios(scs []faults.Scenario) error {
	if err := checkServerScenarios(scs); err != nil {
		return err
	}
	if o.URL == nil {
		return checkStdioScenarios(scs)
	}
	return checkHTTPScenarios(scs)
}

// Run runs the baseline and then the scenarios, and returns the report. An
// error is a *SetupError (or a *chaos.StartError, or ctx's error).
func Run(ctx context.Context, o Options) (*reports.Report, error) {
	o.Scenarios = withSessions(o.Scenarios, o.Sessions)
	if err := o.prepare(ctx, o.Scenarios); err != nil {
		return nil, err
	}
	report := &reports.Report{
		Schema: reports.Schema,
		Tool:   ReportTool(o.Version),
		Target: reports.Target{Command: o.Command},
		Seed:   o.Seed,
	}
	if o.URL != nil {
		report.Target.URL = o.shownURL()
	}

	base, runs, err := o.runMatrix(ctx)
	if err != nil {
		return nil, err
	}
	if o.discoverKilled(base) {
		discover := base
		o = o.stateful()
		if base, runs, err = o.runMatrix(ctx); err != nil {
			return nil, err
		}
		if err := afterDiscover(discover, base); err != nil {
			return nil, err
		}
	}
	if err := o.baselineFailed(base); err != nil {
		return nil, err
	}
	workloadHints(base, o.Deadline)
	return completeMatrix(report, base, runs)
}

// runMatrix runs the baseline and the scenarios, side by side as the
// machine allows; the matrix's notes go to the baseline's.
func (o *Options) runMatrix(ctx context.Context) (*scenarioRun, []*scenarioRun, error) {
	m := matrix{n: o.Parallel, baseline: sampledBaseline(), scenarios: o.Scenarios, progress: o.Progress,
		run: func(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
			r, err := o.runScenario(ctx, sc)
			if err == nil && sc.Name != faults.Baseline.Name {
				scenarioHints(r, o.Deadline)
			}
			return r, err
		},
		unusable: func(base *scenarioRun) bool { return base.probeErr != nil },
	}
	if o.PortPerRun {
		m.perCore = autoPerCoreHTTP
	}
	base, runs, err := m.runMatrix(ctx)
	if err != nil {
		return nil, nil, err
	}
	base.result.Notes = append(base.result.Notes, m.notes...)
	if o.URL != nil && len(o.Command) > 0 && !o.PortPerRun && len(o.Scenarios) > 0 {
		base.result.Notes = append(base.result.Notes, "the scenarios ran one at a time, each starting the server on the URL's port; to run them side by side, write the port as "+
			PortPlaceholder+" in the URL (as in http://127.0.0.1:"+PortPlaceholder+"/mcp) and where the server's command takes its port ("+PortPlaceholder+", or $PORT in its environment): each run then gets a port of its own")
	}
	return base, runs, nil
}

// baselineFailed is the set-up error of a baseline that could not run its
// workload, or nil.
func (o *Options) baselineFailed(base *scenarioRun) error {
	if base.probeErr == nil {
		return nil
	}
	var unknown *probe.UnknownToolError
	if errors.As(base.probeErr, &unknown) {
		return &SetupError{Reason: "a --call names a tool the server does not list", Err: base.probeErr}
	}
	return &SetupError{Reason: notStarted(base, len(o.Header) > 0), Err: base.probeErr, Stderr: base.stderr}
}

// notStarted says why the baseline could not run its workload.
func notStarted(base *scenarioRun, headers bool) string {
	const reason = "the server does not start or initialize without faults"
	if base.refused != "" {
		if headers {
			return reason + " (it refused the handshake with HTTP " + base.refused + ": the credentials sent with --header were not accepted)"
		}
		return reason + " (it refused the handshake with HTTP " + base.refused + ": it wants credentials; send them with --header, as in --header 'Authorization: Bearer TOKEN')"
	}
	return reason
}

// discoverKilled says the baseline of the default era failed on its first
// request: server/discover went unanswered (the server died of it, or its
// session stopped reading) and the initialize handshake after it never
// completed. JSON-RPC owes an unknown method -32601, on which a client of
// the 2026-07-28 revision falls back to initialize; a server that dies
// instead has a bug to report, not a set-up to fix, and the rest of it can
// still be tested in the stateful era.
func (o *Options) discoverKilled(base *scenarioRun) bool {
	if o.Probe.Era != "" || base.probeErr == nil || base.refused != "" || base.probe == nil || base.probe.Initialized {
		return false
	}
	for _, r := range base.probe.Requests {
		if r.Method == "server/discover" {
			return !r.Answered
		}
	}
	return false
}

// sampledBaseline is the matrix's baseline: the polite workload, then the
// hostile sample (issue 40). The baseline alone carries it: the fault
// scenarios' moments are counted on the polite workload, which they share
// with the baseline their findings are compared with, and explore's fault
// points are the polite workload's messages.
func sampledBaseline() faults.Scenario {
	b := faults.Baseline
	b.Workload.Hostile = probe.HostileSample
	return b
}

// stateful is o for the runs made again in the stateful era, after the
// server failed on server/discover.
func (o Options) stateful() Options {
	o.Probe.Era = probe.EraStateful
	if o.StatefulRepro != nil {
		o.Repro = o.StatefulRepro
	}
	if p, ok := o.Progress.(ProgressAgain); ok {
		p.Again("server/discover got no answer: the matrix runs again in the stateful era (the initialize handshake alone, as --era stateful)")
	}
	return o
}

// afterDiscover makes discover, the baseline of the default era that failed
// on server/discover, part of base, the stateful era's baseline run after
// it: its findings came without faults, so they are the baseline's, and its
// transcript is kept beside base's.
func afterDiscover(discover, base *scenarioRun) error {
	if base.probeErr != nil {
		// Neither era works: the set-up error says both were tried.
		base.probeErr = fmt.Errorf("%w (neither with server/discover first, which got no answer, nor with the initialize handshake alone)", base.probeErr)
		return nil
	}
	if err := keepTranscript(&discover.result, "baseline-discover"); err != nil {
		return err
	}
	b := &base.result
	b.Notes = append([]string{discoverNote(discover)}, b.Notes...)
	if t := discover.result.Transcript; t != "" {
		rest := b.Transcripts
		if len(rest) == 0 && b.Transcript != "" {
			rest = []string{b.Transcript}
		}
		b.Transcripts = append([]string{t}, rest...)
	}
	found := discover.verdict.Findings
	base.verdict.Findings = append(slices.Clip(found), base.verdict.Findings...)
	b.Findings += len(found)
	return nil
}

// discoverNote says why the matrix ran in the stateful era.
func discoverNote(discover *scenarioRun) string {
	how := "went unanswered"
	if slices.ContainsFunc(discover.verdict.Findings, func(f reports.Finding) bool { return f.Kind == reports.KindCrash }) {
		how = "killed the server"
	}
	return "server/discover, the first request of a client of the 2026-07-28 revision, " + how + " (the findings of that run, " +
		"the baseline with server/discover first, are listed with the baseline's): a server of an earlier revision owes it an error, " +
		"-32601 Method not found (JSON-RPC 2.0 §5.1), on which the client falls back to the initialize handshake, so a client of the new revision cannot connect to this server; " +
		"the matrix then ran in the stateful era, as --era stateful does, with a fresh server"
}

// keepTranscript moves a run's transcript aside under another name, so
// that the run made after it under the same scenario name does not write
// over it.
func keepTranscript(r *reports.ScenarioResult, name string) error {
	if r.Transcript == "" {
		return nil
	}
	to := filepath.Join(filepath.Dir(r.Transcript), name+".jsonl")
	if err := os.Rename(r.Transcript, to); err != nil {
		return fmt.Errorf("keeping the transcript of the baseline with server/discover first: %w", err)
	}
	r.Transcript = to
	return nil
}

// completeMatrix completes a report from the matrix's runs: the baseline's
// and the scenarios', in their order. The baseline's findings are
// reported once, as the baseline's; a scenario reports what differs from
// them, so a bug the peer has without faults is not blamed on every fault
// (and does not hide what the faults find beyond it). A scenario run that
// fails is saved as a regression case, with its own findings.
func completeMatrix(report *reports.Report, base *scenarioRun, runs []*scenarioRun) (*reports.Report, error) {
	base.result.Outcome = reports.ScenarioOutcome(base.verdict.Findings, base.result.Indeterminate)
	report.Baseline = &base.result
	report.Findings = append(report.Findings, base.verdict.Findings...)
	for _, r := range runs {
		own, known := reports.BeyondBaseline(base.verdict.Findings, r.verdict.Findings)
		if known > 0 {
			r.result.Notes = append(r.result.Notes, reports.KnownNote(known))
		}
		r.result.Findings = len(own)
		r.result.Outcome = reports.ScenarioOutcome(own, r.result.Indeterminate)
		if r.save != nil && r.result.Outcome == reports.OutcomeFail {
			if err := r.save(own); err != nil {
				return nil, err
			}
		}
		report.Scenarios = append(report.Scenarios, r.result)
		report.Findings = append(report.Findings, own...)
	}
	if hint := nothingFired(report.Scenarios); hint != "" {
		report.Baseline.Notes = append(report.Baseline.Notes, hint)
	}
	report.Outcome = reports.OutcomePass
	if reports.Failing(report.Findings) {
		report.Outcome = reports.OutcomeFail
	}
	return report, nil
}

// nothingFired says so, for the baseline's notes, when no fault scenario of
// the matrix could fire: the run then tested nothing but the baseline,
// although its outcome is not a failure, and the user needs to know why.
func nothingFired(scenarios []reports.ScenarioResult) string {
	if len(scenarios) == 0 {
		return ""
	}
	for _, s := range scenarios {
		if s.Outcome != reports.OutcomeIndeterminate || faultFired(s.Indeterminate) {
			return ""
		}
	}
	n := len(scenarios)
	return fmt.Sprintf("none of the %d fault %s could fire, so this run tested the baseline alone: each waited for a moment that never came (its note says which); give the target a workload that reaches them (most client scenarios wait for a tools/call; --call picks a server's tools), or choose faults it does reach with --fault (see mcpchaos faults)",
		n, words.Plural(n, "scenario", "scenarios"))
}

type scenarioRun struct {
	result   reports.ScenarioResult
	verdict  judge.Verdict
	probeErr error
	stderr   []string
	// refused is driven's: an HTTP server wanted credentials.
	refused string
	// probe is what the probe client saw (nil under test-client).
	probe *probe.Outcome
	// opened says the run's MCP session opened: the probe initialized, or
	// the server answered the client program's opening request.
	opened bool
	// decisions are what the run's faults did, and to which messages.
	decisions []faults.Decision
	// save writes the run as a regression case with the findings that are
	// its own (not the baseline's); nil when no case is to be saved.
	save func(own []reports.Finding) error
}

// runScenario runs one scenario: against a fresh server process through
// the stdio relay, or, with a URL, through a fresh proxy.
func (o Options) runScenario(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
	return retryPort(o, Options.onFreshPort, o.PortPerRun, func(run Options) (*scenarioRun, error) {
		if run.URL != nil && sc.Sessions() > 1 {
			return run.runSessions(ctx, sc)
		}
		return run.runScenarioLogged(ctx, sc, nil)
	})
}

// runScenarioLogged is runScenario with a hook that sets up the session's
// log before anything is recorded.
func (o Options) runScenarioLogged(ctx context.Context, sc faults.Scenario, setUp func(*sessionLog)) (*scenarioRun, error) {
	parsed, err := sc.Parse()
	if err != nil {
		return nil, err
	}
	seed := seedFor(sc, o.Seed)
	deadline := deadlineFor(sc, o.Deadline)
	log, err := newSessionLog(o.TranscriptDir, sc.Name)
	if err != nil {
		return nil, err
	}
	if o.URL != nil {
		log.secrets = newSecretWatch(o.Header)
	}
	if setUp != nil {
		setUp(log)
	}
	st := setup{
		sc: sc, seed: seed, plan: faults.NewPlan(seed, parsed), log: log,
		deadline: deadline,
		// Never below the deadline: a scenario may raise its deadline
		// past the run's maximum.
		maxDeadline: max(o.MaxDeadline, deadline),
	}
	if o.Repro != nil {
		st.repro = o.Repro(sc.Selector(), seed)
	}
	st.probe = o.probeConfig(sc, deadline, st.maxDeadline)
	// Side by side, or beside a neighbour's job, the server shares the
	// cores: its deadlines and graces count the CPU it could have had, and
	// the transcript records the share so that the judge counts the same.
	load := machine.StartSampler(func(share float64) {
		log.rec.Record(wire.Event{Type: wire.EventCPUShare, CPUShare: int(math.Round(share * 1000))})
	})
	st.share, st.probe.Share = load.Share, load.Share
	start := time.Now()
	drive := o.driveStdio
	if o.URL != nil {
		drive = o.driveHTTP
	}
	d, err := drive(ctx, st)
	load.Stop()
	if err != nil {
		_, _ = log.finish()
		return nil, err
	}
	took := time.Since(start)

	verdict, err := log.finish()
	if err != nil {
		return nil, err
	}
	if o.observe != nil {
		o.observe(sc.Name, log.decisions.out)
	}
	run := &scenarioRun{decisions: log.decisions.out, probeErr: d.probeErr, stderr: log.stderr.list(), refused: d.refused, verdict: verdict, probe: d.outcome,
		opened: d.outcome != nil && d.outcome.Initialized}
	ApplyExpectation(sc, seed, st.repro, &run.verdict)
	res := reports.ScenarioResult{
		Name:          sc.Name,
		Seed:          seed,
		DurationMS:    took.Milliseconds(),
		Findings:      len(run.verdict.Findings),
		Indeterminate: run.verdict.Indeterminate,
		Notes:         run.verdict.Notes,
	}
	res.Outcome = reports.ScenarioOutcome(run.verdict.Findings, res.Indeterminate)
	res.Transcript = log.path
	run.save = o.caseSaver(sc, seed, deadline, log.decisions.out)
	run.result = res
	return run, nil
}

// caseSaver writes a failing scenario run as a regression case (nil
// without a CaseDir, and for the baseline): the scenario with the deadline
// and era it ran with, the target, the workload and what the faults did.
func (o Options) caseSaver(sc faults.Scenario, seed uint64, deadline time.Duration, decisions []faults.Decision) func([]reports.Finding) error {
	if o.CaseDir == "" || sc.Name == faults.Baseline.Name {
		return nil
	}
	ran := sc
	ran.Deadline = deadline // the replay must judge with the same patience
	if ran.Era == "" {
		ran.Era = o.Probe.Era // and speak the same era
	}
	command, u := o.caseTarget()
	return func(own []reports.Finding) error {
		_, err := SaveCase(o.CaseDir, faults.Case{Scenario: ran, Seed: seed, Command: command, URL: u,
			Calls: ToolCalls(o.Probe.Calls), SkipTools: o.Probe.SkipTools, Decisions: decisions}, own)
		return err
	}
}

// setup is what one scenario run is given, whatever its transport.
type setup struct {
	sc                    faults.Scenario
	seed                  uint64
	plan                  *faults.Plan
	log                   *sessionLog
	deadline, maxDeadline time.Duration
	repro                 string
	probe                 probe.Config
	// share is the share of a core the server gets (machine.Sampler).
	share func() float64
}

// probeConfig shapes the probe client for one scenario.
func (o Options) probeConfig(sc faults.Scenario, deadline, maxDeadline time.Duration) probe.Config {
	pc := o.Probe
	pc.Deadline, pc.MaxDeadline = deadline, maxDeadline
	// Every scenario samples the same resources and prompts as the
	// baseline.
	pc.Seed = o.Seed
	if sc.Era != "" {
		pc.Era = sc.Era
	}
	if pc.MinCalls == 0 {
		pc.MinCalls = 3 // eof-inflight waits for three calls in flight
	}
	if sc.Workload.Calls > 0 {
		pc.MinCalls = sc.Workload.Calls
	}
	if sc.Workload.Concurrency > 0 {
		pc.Concurrency = sc.Workload.Concurrency
	}
	if sc.Workload.Hostile != "" {
		pc.Hostile = sc.Workload.Hostile
	}
	return pc
}

// driven is what the probe made of a session: its outcome, and the error
// that ended it early (the server never initialized...).
type driven struct {
	outcome  *probe.Outcome
	probeErr error
	// refused is the status with which an HTTP server refused the probe
	// for want of credentials ("401 Unauthorized"), or "".
	refused string
}

// driveStdio runs the probe against a fresh server process through the
// stdio relay. An error means the run could not start.
func (o Options) driveStdio(ctx context.Context, st setup) (driven, error) {
	cfg := chaos.Config{
		Probes:      true,
		Command:     o.Command,
		Plan:        st.plan,
		Recorder:    st.log.rec,
		Grace:       o.Grace,
		Share:       st.share,
		Tool:        o.Tool,
		Scenario:    st.sc.Name,
		Role:        "server",
		Deadline:    st.deadline,
		MaxDeadline: st.maxDeadline,
		Repro:       st.repro,
	}
	// The probe plays the client through a pair of pipes.
	toServerR, toServerW, err := os.Pipe()
	if err != nil {
		return driven{}, err
	}
	fromServerR, fromServerW, err := os.Pipe()
	if err != nil {
		toServerR.Close()
		toServerW.Close()
		return driven{}, err
	}
	sess, err := chaos.Start(ctx, cfg, toServerR, fromServerW)
	if err != nil {
		for _, f := range []*os.File{toServerR, toServerW, fromServerR, fromServerW} {
			f.Close()
		}
		return driven{}, err
	}
	pc := st.probe
	pc.Overdue = func(id, method string) {
		sess.Probe(wire.ToServer, fmt.Sprintf("request %s (%s) unanswered after %s", id, method, st.deadline))
	}
	var d driven
	d.outcome, d.probeErr = probe.Run(ctx, pc, fromServerR, toServerW)
	toServerW.Close() // in case the probe returned early: starts the shutdown ladder
	sess.Wait()
	fromServerR.Close()
	return d, nil
}

func writeTranscript(path string, events []wire.Event) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing transcript: %w", err)
	}
	var line []byte
	for i := range events {
		line = events[i].AppendLine(line[:0])
		if _, err := f.Write(line); err != nil {
			f.Close()
			return fmt.Errorf("writing transcript %s: %w", path, err)
		}
	}
	return f.Close()
}

// ShellQuote renders argv as one line a POSIX shell reads back as argv.
func ShellQuote(argv []string) string { return shell.Quote(argv) }
