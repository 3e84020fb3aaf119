package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// ServerCommandEnv hands the client program the server it must launch, as a
// JSON array of argv (DESIGN.md, test-client).
const ServerCommandEnv = "MCPCHAOS_SERVER_COMMAND"

// ClientOptions says how to run a client program through the client matrix.
type ClientOptions struct {
	// Client is the client program; it must launch $MCPCHAOS_SERVER_COMMAND.
	Client []string
	// Server is the real server behind the chaos transport.
	Server []string
	// Self is how to run mcpchaos itself (its wrap command sits between
	// the client and the server).
	Self      []string
	Scenarios []faults.Scenario
	Seed      uint64
	// Deadline is how long the client program may run; past it, it is
	// late. HangAfter is its hang horizon: a client still running then is
	// hung, and is stopped (DefaultHangAfter by default, and never before
	// Deadline). Between the two, it may be waiting out a request timeout
	// of its own SDK's.
	Deadline  time.Duration
	HangAfter time.Duration
	Grace     time.Duration
	// Parallel, TranscriptDir, Repro, Version: as in Options.
	Parallel      int
	TranscriptDir string
	Repro         func(scenario string, seed uint64) string
	Version       string
	// CaseDir: as in Options; the cases record the client and the server.
	CaseDir string
	// Progress: as in Options.
	Progress Progress
	// ServerURL, when set, is the MCP endpoint of an HTTP server: the
	// client program gets the proxy's URL in $MCPCHAOS_SERVER_URL instead
	// of a server command, and Server, when given, is the command that
	// serves ServerURL, started for each scenario (StartTimeout bounds its
	// start, DefaultStartTimeout by default).
	ServerURL    *url.URL
	StartTimeout time.Duration
	// Clients, over HTTP, is how many copies of the client program every
	// run starts at once against one server (test-client --clients N),
	// each judged on its own; 0 and 1 are one.
	Clients int
	// PortPerRun: as in Options, of ServerURL and Server.
	PortPerRun bool

	// serverEnv and serverTemplate: Options' runEnv and commandTemplate.
	serverEnv, serverTemplate []string

	// observe: as in Options.
	observe func(scenario string, decisions []faults.Decision)
}

// DefaultHangAfter is test-client's default hang horizon: twice the longest
// default request timeout of the MCP SDKs (the TypeScript SDK's 60 s; the
// Python SDK's calls wait for ever unless given one, the Go SDKs' until
// their context ends), so a client that fails at its SDK's own timeout is
// seen to do so rather than stopped as hung.
const DefaultHangAfter = 2 * time.Minute

// hangAfterFor is the hang horizon of scenario sc, whose deadline is
// deadline: the scenario's own, else the run's, and never before the
// deadline.
func (o ClientOptions) hangAfterFor(sc faults.Scenario, deadline time.Duration) time.Duration {
	h := o.HangAfter
	if sc.HangAfter > 0 {
		h = sc.HangAfter
	}
	if h <= 0 {
		h = DefaultHangAfter
	}
	return max(h, deadline)
}

// RunClient runs the client program once without faults, then once per
// scenario, each against a fresh server behind `mcpchaos wrap`, and judges
// the client.
// prepare fills in the defaults and checks what every run needs, as
// Options.prepare does, and makes the work directory the runs keep their
// transcripts in (the caller removes it).
func (o *ClientOptions) prepare(ctx context.Context, scs []faults.Scenario) (work string, err error) {
	if o.Deadline <= 0 {
		o.Deadline = 30 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Parallel < 0 {
		o.Parallel = 0
	}
	if o.Clients > 1 && o.ServerURL == nil {
		return "", fmt.Errorf("%d clients at once share one HTTP server (--server-url); over stdio each client starts a server of its own", o.Clients)
	}
	if o.Clients > faults.MaxSessions {
		return "", fmt.Errorf("%d clients at once: at most %d", o.Clients, faults.MaxSessions)
	}
	if o.ServerURL == nil {
		// The server runs under mcpchaos wrap, a stdio relay.
		if err := chaos.StdioSupported(); err != nil {
			return "", err
		}
	}
	for _, c := range [][]string{o.Client, o.Server} {
		if o.ServerURL != nil && len(c) == 0 {
			continue // over HTTP the server may be running already
		}
		if err := chaos.CheckCommand(c); err != nil {
			return "", err
		}
	}
	if err := checkClientScenarios(scs); err != nil {
		return "", err
	}
	if o.ServerURL == nil {
		if err := checkStdioScenarios(scs); err != nil {
			return "", err
		}
	} else {
		if err := checkHTTPScenarios(scs); err != nil {
			return "", err
		}
		if o.PortPerRun && len(o.Server) == 0 {
			return "", &SetupError{Reason: "the server URL's port is " + PortPlaceholder + ", but no server command was given", Err: errors.New("mcpchaos picks a port for each run and starts the server on it: give --server, with " + PortPlaceholder + " or $PORT where it takes its port")}
		}
		var err error
		if o.PortPerRun {
			// Each run's server gets a port of its own.
		} else if o.Parallel, err = onePort(o.Server, o.Parallel); err != nil {
			return "", err
		}
		if len(o.Server) == 0 {
			if err := CheckReachable(ctx, o.ServerURL); err != nil {
				return "", &SetupError{Reason: "the HTTP server cannot be reached", Err: err}
			}
		} else if err := CheckPortFree(ctx, o.ServerURL); err != nil {
			return "", err
		}
	}
	if o.CaseDir != "" {
		if err := os.MkdirAll(o.CaseDir, 0o755); err != nil {
			return "", fmt.Errorf("cannot create the case directory: %w", err)
		}
	}
	if o.TranscriptDir != "" {
		if err := os.MkdirAll(o.TranscriptDir, 0o755); err != nil {
			return "", fmt.Errorf("cannot create the transcript directory: %w", err)
		}
	}
	return os.MkdirTemp("", "mcpchaos-client-")
}

func RunClient(ctx context.Context, o ClientOptions) (*reports.Report, error) {
	work, err := o.prepare(ctx, o.Scenarios)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	report := &reports.Report{
		Schema: reports.Schema,
		Tool:   ReportTool(o.Version),
		Target: reports.Target{Command: o.Client, Role: reports.RoleClient, Server: o.Server},
		Seed:   o.Seed,
	}
	if o.ServerURL != nil {
		report.Target.URL = o.ServerURL.Redacted()
		if o.PortPerRun {
			report.Target.URL = URLTemplate(o.ServerURL)
		}
	}
	baseline := faults.Baseline
	baseline.Expect = "success"
	m := matrix{n: o.Parallel, baseline: baseline, scenarios: o.Scenarios, progress: o.Progress,
		run: func(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
			return o.runClientScenario(ctx, sc, work)
		},
		// A client that fails its baseline is a finding, not a set-up error.
		unusable: func(*scenarioRun) bool { return false },
	}
	base, runs, err := m.runMatrix(ctx)
	if err != nil {
		return nil, err
	}
	base.result.Notes = append(base.result.Notes, m.notes...)
	return completeMatrix(report, base, runs)
}

// opensSession reports whether the client sent the request that opens an
// MCP session (initialize, or server/discover in the stateless revision).
func opensSession(events []wire.Event) bool {
	for i := range events {
		e := &events[i]
		if e.Type == wire.EventReceived && e.Dir == wire.ToServer.String() && e.Kind == "request" && (e.Method == "initialize" || e.Method == "server/discover") {
			return true
		}
	}
	return false
}

// clientEvents records what happens to the client program, on the runner's
// clock, for merging into the wrap transcript.
type clientEvents struct {
	start  time.Time
	mu     sync.Mutex
	events []wire.Event
}

func (c *clientEvents) add(e wire.Event) {
	e.Peer = "client"
	e.T = time.Since(c.start).Microseconds()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, e)
}

func (o ClientOptions) runClientScenario(ctx context.Context, sc faults.Scenario, work string) (*scenarioRun, error) {
	if sc.Expect == "" {
		sc.Expect = "success" // a scenario file may leave it out: every call stays answerable
	}
	if o.ServerURL != nil {
		return retryPort(o, ClientOptions.onFreshPort, o.PortPerRun, func(run ClientOptions) (*scenarioRun, error) {
			if run.Clients > 1 {
				return run.runHTTPClientsScenario(ctx, sc)
			}
			return run.runHTTPClientScenario(ctx, sc)
		})
	}
	if _, err := sc.Parse(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(work, sc.Name+"-")
	if err != nil {
		return nil, err
	}
	transcript := filepath.Join(dir, "transcript.jsonl")
	pidFile := filepath.Join(dir, "wrap.pid")
	seed := seedFor(sc, o.Seed)
	o.Deadline = deadlineFor(sc, o.Deadline)
	hangAfter := o.hangAfterFor(sc, o.Deadline)
	wrapArgv := append(slices.Clone(o.Self), "wrap", "-q",
		"--role", "client", "--scenario-name", sc.Name, "--expect", sc.Expect,
		"--seed", strconv.FormatUint(seed, 10), "--deadline", o.Deadline.String(), "--hang-after", hangAfter.String(), "--grace", o.Grace.String(),
		"--transcript", transcript, "--pid-file", pidFile)
	repro := ""
	if o.Repro != nil {
		repro = o.Repro(sc.Selector(), seed)
		wrapArgv = append(wrapArgv, "--repro", repro)
	}
	for _, f := range sc.Faults {
		wrapArgv = append(wrapArgv, "--fault", f)
	}
	wrapArgv = append(append(wrapArgv, "--"), o.Server...)
	serverJSON, _ := json.Marshal(wrapArgv)

	rec := &clientEvents{start: time.Now()}
	env := append(os.Environ(), ServerCommandEnv+"="+string(serverJSON))
	proc, err := startClient(o.Client, env, rec.add)
	if err != nil {
		return nil, err
	}
	proc.await(ctx, o.Deadline, hangAfter, o.Grace, func() {
		// Past its deadline: ask the transport to probe the client, so the
		// verdict can say whether its receive loop still runs.
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				askProbe(pid)
			}
		}
	}, func() bool {
		// Without wrap's pid file, the client never started the server.
		_, err := os.Stat(pidFile)
		return errors.Is(err, os.ErrNotExist)
	})
	// The wrap process writes its transcript once its server is down.
	waitForSessionEnd(transcript, pidFile, 2*o.Grace+3*time.Second)
	proc.finish()

	events, err := readTranscriptFile(transcript)
	if errors.Is(err, os.ErrNotExist) {
		if sc.Name == faults.Baseline.Name {
			return nil, &SetupError{Reason: "the client did not start the server from $" + ServerCommandEnv + ": it " + proc.endWords() + " (does it read the variable?)", Stderr: stderrText(rec.events)}
		}
		events = nil
	} else if err != nil {
		return nil, err
	}
	if sc.Name == faults.Baseline.Name && !opensSession(events) {
		return nil, &SetupError{Reason: "the client started the server from $" + ServerCommandEnv + " but opened no MCP session on it: it sent no initialize (nor server/discover) request, and it " + proc.endWords() + "; is it an MCP client?", Stderr: stderrText(rec.events)}
	}
	events = mergeClientEvents(events, rec)
	if o.observe != nil {
		o.observe(sc.Name, Decisions(events))
	}
	run := clientVerdict(sc, seed, repro, judge.Session(events), time.Since(rec.start))
	var served openingAnswer
	for i := range events {
		served.see(&events[i])
	}
	run.opened = served.answered
	run.stderr = stderrText(rec.events)
	res := &run.result
	if o.TranscriptDir != "" {
		path := filepath.Join(o.TranscriptDir, sc.Name+".jsonl")
		if err := writeTranscript(path, events); err != nil {
			return nil, err
		}
		res.Transcript = path
	}
	run.save = o.caseSaver(sc, seed, o.Deadline, hangAfter, Decisions(events))
	return run, nil
}

// caseSaver writes a failing client scenario run as a regression case
// (nil without a CaseDir, and for the baseline): the scenario with the
// deadline and hang horizon it ran with, the client, the server and its URL.
func (o ClientOptions) caseSaver(sc faults.Scenario, seed uint64, deadline, hangAfter time.Duration, decisions []faults.Decision) func([]reports.Finding) error {
	if o.CaseDir == "" || sc.Name == faults.Baseline.Name {
		return nil
	}
	sc.Deadline, sc.HangAfter = deadline, hangAfter
	server, u := o.caseTarget()
	return func(own []reports.Finding) error {
		_, err := SaveCase(o.CaseDir, faults.Case{Scenario: sc, Seed: seed, Client: true, Command: o.Client, Server: server,
			URL: u, Decisions: decisions}, own)
		return err
	}
}

// clientVerdict makes a client scenario's run of its verdict.
func clientVerdict(sc faults.Scenario, seed uint64, repro string, v judge.Verdict, took time.Duration) *scenarioRun {
	run := &scenarioRun{verdict: v}
	for i := range run.verdict.Findings {
		// A wrap killed before it wrote its session event leaves the judge
		// without the scenario's name; the runner knows it.
		if f := &run.verdict.Findings[i]; f.Scenario == "" {
			f.Scenario, f.Seed, f.Repro = sc.Name, seed, repro
		}
	}
	ApplyExpectation(sc, seed, repro, &run.verdict)
	run.result = reports.ScenarioResult{
		Name: sc.Name, Seed: seed, DurationMS: took.Milliseconds(),
		Findings: len(run.verdict.Findings), Indeterminate: run.verdict.Indeterminate, Notes: run.verdict.Notes,
	}
	run.result.Outcome = reports.ScenarioOutcome(run.verdict.Findings, run.result.Indeterminate)
	return run
}

// waitForSessionEnd polls the transcript until its session-end event is
// written, the wrap process is gone (a client may SIGKILL its server), or
// the timeout passes.
func waitForSessionEnd(path, pidFile string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(lastLine(b), `"type":"session-end"`) {
			return true
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && processGone(pid) {
				return false
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func readTranscriptFile(path string) ([]wire.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []wire.Event
	err = wire.ReadTranscript(f, func(e wire.Event) error {
		events = append(events, e)
		return nil
	})
	return events, err
}

// mergeClientEvents places the runner's client events on the wrap
// transcript's clock and renumbers everything in time order. With no wrap
// transcript (the client never started the server), the client events stand
// alone after a synthetic session event.
func mergeClientEvents(events []wire.Event, rec *clientEvents) []wire.Event {
	offset := int64(0)
	if len(events) > 0 && events[0].WallStartUnixNano != 0 {
		offset = (rec.start.UnixNano() - events[0].WallStartUnixNano) / 1000
	}
	if len(events) == 0 {
		events = []wire.Event{{Type: wire.EventSession, Role: "client"}}
	}
	var merged []wire.Event
	merged = append(merged, events[0])
	rest := append([]wire.Event(nil), events[1:]...)
	for _, e := range rec.events {
		e.T += offset
		rest = append(rest, e)
	}
	// Stable: events of one source keep their order when times tie.
	slices.SortStableFunc(rest, func(a, b wire.Event) int {
		if a.Type == wire.EventSessionEnd {
			return 1
		}
		if b.Type == wire.EventSessionEnd {
			return -1
		}
		return int(a.T - b.T)
	})
	merged = append(merged, rest...)
	oldToNew := map[int64]int64{}
	for i := range merged {
		if merged[i].Peer == "" {
			oldToNew[merged[i].Seq] = int64(i + 1)
		}
	}
	for i := range merged {
		merged[i].Seq = int64(i + 1)
		if merged[i].Of != 0 {
			merged[i].Of = oldToNew[merged[i].Of]
		}
	}
	return merged
}

func stderrText(events []wire.Event) []string {
	var out []string
	for _, e := range events {
		if e.Type == wire.EventStderr {
			b, _ := e.Bytes()
			out = append(out, strings.TrimRight(string(b), "\r\n"))
		}
	}
	return out
}
