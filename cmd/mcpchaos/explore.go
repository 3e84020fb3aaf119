package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/explore"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// exploreFlags are explore's flags beyond the target's.
type exploreFlags struct {
	seed          uint64
	deadline      time.Duration
	maxWait       time.Duration
	grace         time.Duration
	parallel      int
	budget        time.Duration
	maxRuns       int
	repeats       int
	shard         string
	reports       reportOutputs
	transcriptDir string
	saveCase      string
	saveScenarios string
	state         string
	strict        bool
}

func runExplore(args []string, stdout, stderr io.Writer) int {
	flagArgs, command, hasCommand := splitCommand(args)
	fs := pflag.NewFlagSet("explore", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		e         exploreFlags
		calls     []string
		skipTools []string
		serverURL string
		headers   []string
		startWait time.Duration
		era       string
	)
	e.register(fs, suite.DefaultDeadline, "how long a request may stay unanswered before it is a hang", "shutdown ladder wait: stdin closed, wait, SIGTERM, wait, SIGKILL")
	fs.DurationVar(&e.maxWait, "max-deadline", suite.DefaultMaxDeadline, "the longest a request that keeps sending progress notifications is waited for (each one restarts its --deadline)")
	fs.StringArrayVar(&calls, "call", nil, "call this tool, as `NAME=JSON` arguments (repeatable; default: every tool, arguments from its schema)")
	fs.StringArrayVar(&skipTools, "skip-tool", nil, "never call the tool `NAME` (repeatable)")
	fs.StringVar(&serverURL, "url", "", "explore the HTTP MCP server at `URL` (streamable HTTP, or the legacy HTTP+SSE transport at .../sse) through the HTTP proxy; with a command after --, start that server first for each run")
	fs.StringArrayVar(&headers, "header", nil, "send this header with every request to the --url server, as `NAME:VALUE` (repeatable)")
	fs.DurationVar(&startWait, "start-timeout", suite.DefaultStartTimeout, "with --url and a command, how long the server may take to listen")
	fs.StringVar(&era, "era", "auto", "the protocol `ERA` the probe speaks: auto or stateful (as test --era)")
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos explore [flags] [-- CMD [ARGS...]]\n       mcpchaos explore --url URL [flags] [-- CMD [ARGS...]]\n\nSearches the fault space of the stdio MCP server CMD (default: the bundled\nexample server), or of the HTTP MCP server at URL: from the messages of a\nno-fault baseline it lists every fault point (message by direction, kind,\nmethod and position, times each fault family that can act on it), runs them\none fault a run, skipping points equivalent to one that already landed, then\nseeded combinations of two or three faults while the budget lasts. Each\nfinding is shrunk to the smallest plan that still reproduces it, and re-run\nto say how often it does.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "explore: %v (see mcpchaos explore --help)", err)
	}
	switch {
	case fs.NArg() > 0:
		return usageError(stderr, "explore: unexpected argument %q; put the server command after --, as in mcpchaos explore -- python server.py", fs.Arg(0))
	case hasCommand && len(command) == 0:
		return usageError(stderr, "explore: nothing after --; give the server command, as in mcpchaos explore -- python server.py")
	}
	shard, err := e.check(fs, "explore")
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	if e.maxWait <= 0 {
		return usageError(stderr, "explore: --max-deadline must be positive")
	}
	probeEra, err := parseEra(era)
	if err != nil {
		return usageError(stderr, "explore: %v", err)
	}
	probeCalls, err := parseCalls(calls)
	if err != nil {
		return usageError(stderr, "explore: %v", err)
	}
	header, err := parseHeaders(headers)
	if err != nil {
		return usageError(stderr, "explore: %v", err)
	}
	o := suite.Options{
		Command: command, Header: header, Seed: e.seed,
		Deadline: e.deadline, MaxDeadline: e.maxWait, Grace: e.grace, Parallel: e.parallel,
		TranscriptDir: e.transcriptDir, CaseDir: e.saveCase,
		Probe: probe.Config{Calls: probeCalls, SkipTools: skipTools, Era: probeEra},
		Tool:  "mcpchaos " + version, Version: version,
	}
	var targetArgs []string
	defaultTarget := false
	against := ""
	if serverURL != "" {
		target, err := exploreServerFlags.target(fs, serverURL, command, startWait, e.parallel)
		if err != nil {
			return usageError(stderr, "%v", err)
		}
		o.URL, o.StartTimeout, o.PortPerRun = target.url, target.startWait, target.perRun
		targetArgs = slices.Concat(target.args, headerArgs(headers))
		against = target.String()
	} else {
		for _, f := range []string{"header", "start-timeout"} {
			if fs.Changed(f) {
				return usageError(stderr, "explore: --%s goes with --url, for an HTTP server", f)
			}
		}
		if code, refused := refuseStdio(stderr, "mcpchaos explore without --url (a stdio server)"); refused {
			return code
		}
		if !hasCommand {
			self, err := os.Executable()
			if err != nil {
				return usageError(stderr, "explore: cannot find the bundled example server: %v", err)
			}
			o.Command, defaultTarget = []string{self, "serve"}, true
		}
		against = suite.ShellQuote(o.Command)
	}
	fmt.Fprintf(stdout, "mcpchaos explore: seed %d, budget %s, against %s\n", e.seed, e.budget, against)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	trials, err := suite.NewTrials(ctx, o)
	if err != nil {
		return runFailed(stderr, "explore", "server", err)
	}
	repro := func(g *explore.Group) string {
		argv := []string{"mcpchaos", "test"}
		argv = append(argv, faultArgs(g)...)
		argv = append(argv, "--seed", fmt.Sprint(e.seed))
		if e.deadline != suite.DefaultDeadline {
			argv = append(argv, "--deadline", e.deadline.String())
		}
		if e.maxWait != suite.DefaultMaxDeadline {
			argv = append(argv, "--max-deadline", e.maxWait.String())
		}
		argv = append(argv, targetArgs...)
		argv = append(argv, workloadArgs(calls, append(slices.Clip(skipTools), g.SkipTools...), probeEra)...)
		if !defaultTarget && len(command) > 0 {
			argv = append(append(argv, "--"), command...)
		}
		return suite.ShellQuote(argv)
	}
	return e.search(ctx, trials, start, shard, repro, "test", stdout, stderr)
}

// faultArgs are the --fault flags of a group's smallest plan.
func faultArgs(g *explore.Group) []string {
	var out []string
	for _, s := range explore.Specs(g.Minimal) {
		out = append(out, "--fault", s)
	}
	return out
}

// explorer is what a search runs against: a server (suite.Trials) or a
// client program (suite.ClientTrials), its baseline already run.
type explorer interface {
	explore.Runner
	Baseline() suite.Trial
	Messages() []suite.Message
	HTTP() bool
	Slots(runs int) (int, string)
	Target() reports.Target
}

// search is explore's and explore-client's search once the baseline has
// run: enumerate, explore, shrink, report. replayWith is the command that
// replays what it finds (test or test-client).
func (e *exploreFlags) search(ctx context.Context, tr explorer, start time.Time, shard *explore.Shard, repro func(*explore.Group) string, replayWith string, stdout, stderr io.Writer) int {
	command := "explore"
	client := replayWith == "test-client"
	if client {
		command = "explore-client"
	}
	msgs := tr.Messages()
	points := explore.Enumerate(msgs, explore.Target{HTTP: tr.HTTP(), Stateful: stateful(msgs), Client: client})
	slots, capped := tr.Slots(len(points))
	xo := explore.Options{
		Runner: tr, Points: points, Client: client, Seed: e.seed,
		Budget: e.budget - time.Since(start), MaxRuns: e.maxRuns, Parallel: slots,
		Shard: shard, Repeats: e.repeats,
	}
	if !client {
		xo.Tools = calledTools(msgs)
	}
	if e.state != "" {
		var err error
		xo.StateKey = explore.StateKey(tr.Target(), e.seed, shard, points)
		if xo.Resume, err = explore.ReadState(e.state, xo.StateKey); err != nil {
			return usageError(stderr, "%s: --state: %v", command, err)
		}
		if xo.Resume != nil {
			fmt.Fprintf(stdout, "mcpchaos %s: resuming the search in %s: %d runs made, %d findings\n", command, e.state, len(xo.Resume.Runs), len(xo.Resume.Groups))
		}
		xo.Save = func(st *explore.State) error { return explore.WriteState(e.state, st) }
	}
	progress := newExploreProgress(stderr)
	xo.Progress = progress.update
	res, err := explore.Explore(ctx, xo)
	progress.close()
	if err != nil {
		whose := "server"
		if client {
			whose = "client"
		}
		return runFailed(stderr, command, whose, err)
	}
	report := exploreReport(tr, res, *e, shard, repro)
	if capped != "" {
		report.Baseline.Notes = append(report.Baseline.Notes, capped)
	}
	if e.saveCase != "" {
		// A case for each smallest plan, with the findings of every
		// signature it reproduced.
		saved := map[string]bool{}
		for _, g := range res.Groups {
			if name := groupName(g); !saved[name] {
				saved[name] = true
				if err := g.Trial.SaveCase(); err != nil {
					return usageError(stderr, "%s: %v", command, err)
				}
			}
		}
	}
	if e.saveScenarios != "" {
		if err := writeExploreScenarios(e.saveScenarios, report, e.seed); err != nil {
			return usageError(stderr, "%s: %v", command, err)
		}
	}
	code := finishReport(report, &e.reports, e.strict, stdout, stderr)
	if e.saveCase != "" && len(report.Scenarios) > 0 {
		fmt.Fprintf(stdout, "%d smallest plan(s) saved as cases in %s; replay them with mcpchaos %s --cases %s\n", len(report.Scenarios), e.saveCase, replayWith, suite.ShellQuote([]string{e.saveCase}))
	}
	return code
}

// register adds the flags explore and explore-client share.
func (e *exploreFlags) register(fs *pflag.FlagSet, deadline time.Duration, deadlineDoc, graceDoc string) {
	fs.Uint64Var(&e.seed, "seed", 0, "seed for every random decision: the same seed explores the same points in the same order (default: random, printed)")
	fs.DurationVar(&e.budget, "budget", explore.DefaultBudget, "how long the whole search may take, shrinking included")
	fs.IntVar(&e.maxRuns, "max-runs", 0, "run at most `N` fault plans in the search (shrinking and re-runs apart; default: as many as the budget allows)")
	fs.IntVar(&e.repeats, "repeats", explore.DefaultRepeats, "run each shrunk plan again `N` times to say how often it reproduces")
	fs.StringVar(&e.shard, "shard", "", "search only slice `K/N` of the fault space (needs --seed, the same for every shard); mcpchaos report merge joins the shards' reports")
	fs.DurationVar(&e.deadline, "deadline", deadline, deadlineDoc)
	fs.DurationVar(&e.grace, "grace", suite.DefaultGrace, graceDoc)
	fs.IntVar(&e.parallel, "parallel", 0, "runs to go at once (default: as many as the machine's cores and memory take)")
	e.reports.register(fs, "write the mcpchaos.report/v1 JSON report to `FILE`")
	fs.StringVar(&e.transcriptDir, "transcript-dir", "", "write one transcript per run into `DIR`")
	fs.StringVar(&e.saveCase, "save-case", "", "write the smallest plan of each finding into `DIR` as a regression case file (replay it with --cases DIR of test or test-client)")
	fs.StringVar(&e.saveScenarios, "save-scenarios", "", "write the smallest plan of each finding to `FILE` as a scenario file (run it with --scenario FILE of test or test-client)")
	fs.StringVar(&e.state, "state", "", "keep the search's state in `FILE`, written as it goes: a later explore of the same target, seed and shard given the same FILE resumes where this one stopped (a CI job past its time limit)")
	fs.BoolVar(&e.strict, "strict", false, "exit 1 on warnings too")
}

// check checks the shared flags and draws the seed when none was given;
// the error is a usage error.
func (e *exploreFlags) check(fs *pflag.FlagSet, command string) (*explore.Shard, error) {
	switch {
	case e.budget <= 0:
		return nil, fmt.Errorf("%s: --budget must be positive, as in --budget 2m", command)
	case e.maxRuns < 0:
		return nil, fmt.Errorf("%s: --max-runs must be positive (leave it out to let the budget decide)", command)
	case e.repeats < 1:
		return nil, fmt.Errorf("%s: --repeats must be at least 1", command)
	case e.deadline <= 0 || e.grace <= 0:
		return nil, fmt.Errorf("%s: --deadline and --grace must be positive", command)
	case e.parallel < 0 || (e.parallel == 0 && fs.Changed("parallel")):
		return nil, fmt.Errorf("%s: --parallel must be positive (leave it out to let the machine decide)", command)
	}
	if err := e.reports.parse(true); err != nil {
		return nil, fmt.Errorf("%s: %v", command, err)
	}
	shard, err := parseExploreShard(fs, e.shard)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", command, err)
	}
	if !fs.Changed("seed") {
		e.seed = rand.Uint64()
	}
	return shard, nil
}

// exploreServerFlags name explore's server flags in its messages.
var exploreServerFlags = serverFlags{name: "explore", urlFlag: "--url", from: "the command after --", none: "command"}

// stateful says the baseline session opened with the initialize handshake:
// it has server-to-client requests and a notifications/initialized.
func stateful(msgs []suite.Message) bool {
	return slices.ContainsFunc(msgs, func(m suite.Message) bool {
		return m.Dir == "c2s" && m.Kind == "request" && m.Method == "initialize"
	})
}

// calledTools are the tools the baseline's workload called, in order.
func calledTools(msgs []suite.Message) []string {
	var out []string
	for _, m := range msgs {
		// The probe's own check that an unknown tool is refused is no
		// tool of the server's.
		if m.Dir == "c2s" && m.Kind == "request" && m.Tool != "" && !strings.HasPrefix(m.Tool, "mcpchaos-") && !slices.Contains(out, m.Tool) {
			out = append(out, m.Tool)
		}
	}
	return out
}

func parseExploreShard(fs *pflag.FlagSet, s string) (*explore.Shard, error) {
	if s == "" {
		return nil, nil
	}
	var k, n int
	if _, err := fmt.Sscanf(s, "%d/%d", &k, &n); err != nil || n < 1 || k < 1 || k > n || fmt.Sprintf("%d/%d", k, n) != s {
		return nil, fmt.Errorf("--shard %q: write K/N with 1 <= K <= N, as in --shard 2/4", s)
	}
	if !fs.Changed("seed") {
		return nil, fmt.Errorf("--shard %s needs --seed: every shard of a search must use the same seed (as in --seed %d on each)", s, rand.Uint32())
	}
	return &explore.Shard{K: k, N: n}, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// groupName names a finding's scenario in the report: from its smallest
// plan, so that two searches that shrink a bug alike name it alike.
func groupName(g *explore.Group) string {
	var parts []string
	for _, f := range g.Minimal {
		p := f.Family
		if f.At.Method != "" {
			p += "-" + f.At.Dir + "-" + f.At.Kind + "-" + f.At.Method
			if f.At.Tool != "" {
				p += "-" + f.At.Tool
			}
			if f.Nth > 0 {
				p += fmt.Sprintf("-%d", f.Nth)
			}
		}
		parts = append(parts, strings.Trim(unsafeName.ReplaceAllString(p, "-"), "-"))
	}
	return "explore." + strings.Join(parts, ".")
}

// exploreReport is the report of a search: the baseline, one scenario for
// each finding group (its smallest plan's run) and what the search covered.
func exploreReport(trials explorer, res *explore.Result, e exploreFlags, shard *explore.Shard, repro func(*explore.Group) string) *reports.Report {
	base := trials.Baseline()
	r := &reports.Report{
		Schema: reports.Schema, Tool: suite.ReportTool(version),
		Target: trials.Target(), Seed: e.seed,
		Scenarios: []reports.ScenarioResult{}, Findings: slices.Clone(base.Findings),
	}
	bres := base.Result
	r.Baseline = &bres
	x := &reports.Exploration{
		BudgetMS: e.budget.Milliseconds(), ElapsedMS: res.Elapsed.Milliseconds(), BudgetEnded: res.Budgeted,
		Points: res.Points, SkippedByReduction: res.Skipped, Unreached: res.Unreached, ResumedRuns: res.Resumed,
		Coverage: []reports.ExploreCoverage{}, Found: []reports.ExploreFinding{},
	}
	if shard != nil {
		r.Shard = &reports.Shard{Index: shard.K, Total: shard.N, Matrix: reports.ExploreMatrix,
			Run: reports.ShardRun(e.seed, r.Target, reports.ExploreMatrix, shard.N)}
	}
	for _, run := range res.Runs {
		switch run.Phase {
		case explore.PhaseSystematic:
			x.SystematicRuns++
		case explore.PhaseCombination:
			x.CombinationRuns++
		case explore.PhaseShrink:
			x.ShrinkRuns++
		case explore.PhaseRepeat:
			x.RepeatRuns++
		}
		if (run.Phase == explore.PhaseSystematic || run.Phase == explore.PhaseCombination) && !run.Landed {
			x.NotLanded++
		}
	}
	for _, c := range res.Coverage {
		x.Coverage = append(x.Coverage, reports.ExploreCoverage(c))
	}
	// One scenario for each smallest plan, holding the findings of the
	// groups it reproduced: two signatures of one run (a crash, and the
	// answers it lost) shrink to one plan more often than not.
	scenarioOf := map[string]int{}
	for _, g := range res.Groups {
		name := groupName(g)
		line := repro(g)
		i, ok := scenarioOf[name]
		if !ok {
			sr := g.Trial.Result
			sr.Name, sr.Findings = name, 0
			i = len(r.Scenarios)
			scenarioOf[name] = i
			r.Scenarios = append(r.Scenarios, sr)
		}
		// The group's findings, and those its run had as their
		// consequence (the answers lost to a crash).
		causes := explore.Causes(g.Trial.Findings)
		for _, f := range g.Trial.Findings {
			if sig := explore.Signature(f); sig != g.Signature && (ok || slices.Contains(causes, sig)) {
				continue
			}
			f.Scenario, f.Repro = name, line
			r.Findings = append(r.Findings, f)
			r.Scenarios[i].Findings++
		}
		x.Found = append(x.Found, reports.ExploreFinding{
			Signature: g.Signature, Scenario: name,
			First: explore.Specs(g.First), Minimal: explore.Specs(g.Minimal), SkipTools: g.SkipTools,
			FoundAfterMS: g.FoundAfter.Milliseconds(), FoundBy: g.FoundBy,
			Reproduced: g.Reproduced, Tries: g.Tries, ShrinkRuns: g.ShrinkRuns, ShrinkCut: g.Cut,
		})
	}
	r.Explore = x
	r.Outcome = reports.OutcomePass
	if reports.Failing(r.Findings) {
		r.Outcome = reports.OutcomeFail
	}
	return r
}
