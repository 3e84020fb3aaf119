package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

type wrapFlags struct {
	scenarios  []string
	faults     []string
	seed       uint64
	transcript string
	maxLine    int
	grace      time.Duration
	quiet      bool

	// Set by test-client for the session it judges; hidden from --help.
	reports                                reportOutputs
	role, scenario, expect, repro, pidFile string
	deadline, hangAfter                    time.Duration
}

// transcriptFlush bounds how long an event waits in wrap's transcript buffer:
// clients often SIGKILL their server within milliseconds of their last call.
const transcriptFlush = 5 * time.Millisecond

func runWrap(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flagArgs, command, hasCommand := splitCommand(args)
	fs := pflag.NewFlagSet("wrap", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f wrapFlags
	fs.StringArrayVar(&f.faults, "fault", nil, "fault `SPEC` to inject, NAME[:KEY=VALUE,...] (repeatable; see mcpchaos faults)")
	fs.StringArrayVar(&f.scenarios, "scenario", nil, "inject the faults of one scenario: a built-in `NAME` (see mcpchaos scenarios), a scenario FILE holding one, or FILE#NAME; --fault adds to them")
	fs.Uint64Var(&f.seed, "seed", 0, "seed for every random decision (default: random, printed at start)")
	fs.StringVar(&f.transcript, "transcript", "", "write the session's events to `FILE`: JSON lines, and frames relayed untouched as they came")
	fs.IntVar(&f.maxLine, "max-line", chaos.DefaultMaxLine, "longest line in `BYTES` classified as one message; longer lines pass through in pieces")
	fs.DurationVar(&f.grace, "grace", chaos.DefaultGrace, "shutdown ladder wait: stdin closed, wait, SIGTERM, wait, SIGKILL")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print the seed line on stderr")
	f.reports.register(fs, "judge the session when it ends and write the mcpchaos.report/v1 JSON to `FILE`")
	fs.StringVar(&f.role, "role", "", "peer under test, recorded for the judge (server or client)")
	fs.StringVar(&f.scenario, "scenario-name", "", "scenario name, recorded for the judge")
	fs.StringVar(&f.expect, "expect", "", "what the client must do, recorded for the judge (success or failure)")
	fs.StringVar(&f.repro, "repro", "", "command line that replays this session, recorded for the judge")
	fs.DurationVar(&f.deadline, "deadline", 0, "request deadline, recorded for the judge")
	fs.DurationVar(&f.hangAfter, "hang-after", 0, "a client program's hang horizon, recorded for the judge")
	fs.StringVar(&f.pidFile, "pid-file", "", "write our pid to `FILE`; SIGUSR1 then sends a liveness probe to the client")
	for _, hidden := range []string{"role", "scenario-name", "expect", "repro", "deadline", "hang-after", "pid-file"} {
		_ = fs.MarkHidden(hidden)
	}
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos wrap [flags] -- CMD [ARGS...]\n\nRelays a stdio MCP session between the client that started us and CMD,\ninjecting the given faults.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "wrap: %v (see mcpchaos wrap --help)", err)
	}
	if code, refused := refuseStdio(stderr, "mcpchaos wrap"); refused {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "wrap: unexpected argument %q before --; put the server command after --, as in mcpchaos wrap -- python server.py", fs.Arg(0))
	}
	if !hasCommand || len(command) == 0 {
		return usageError(stderr, "wrap: no server command; put it after --, as in mcpchaos wrap -- python server.py")
	}
	if err := f.reports.parse(false); err != nil {
		return usageError(stderr, "wrap: %v", err)
	}
	var sc *faults.Scenario
	if len(f.scenarios) > 1 {
		return usageError(stderr, "wrap: --scenario given %d times; one session runs one scenario (add faults with --fault)", len(f.scenarios))
	}
	if len(f.scenarios) == 1 {
		got, err := relayScenario("wrap", f.scenarios[0], f.reports.wanted())
		if err != nil {
			return usageError(stderr, "wrap: %v", err)
		}
		sc = &got
		f.faults = append(slices.Clone(got.Faults), f.faults...)
		if got.Seed != nil && !fs.Changed("seed") {
			f.seed = *got.Seed
		}
		if got.Deadline > 0 && !fs.Changed("deadline") {
			f.deadline = got.Deadline
		}
		if f.scenario == "" {
			f.scenario = got.Name
		}
		if f.expect == "" {
			f.expect = got.Expect
		}
	}
	var parsed []*faults.Fault
	for _, spec := range f.faults {
		flt, err := faults.Parse(spec)
		if err != nil {
			return usageError(stderr, "%v", err)
		}
		parsed = append(parsed, flt)
	}
	if f.maxLine <= 0 {
		return usageError(stderr, "wrap: --max-line must be positive, got %d", f.maxLine)
	}
	if f.grace <= 0 {
		return usageError(stderr, "wrap: --grace must be positive, got %s", f.grace)
	}
	if err := chaos.CheckCommand(command); err != nil {
		return usageError(stderr, "wrap: %v", err)
	}
	if !fs.Changed("seed") && (sc == nil || sc.Seed == nil) {
		f.seed = rand.Uint64()
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "mcpchaos wrap: seed %d, %d fault(s); replay with --seed %d\n", f.seed, len(parsed), f.seed)
		if sc != nil && sc.Era != "" {
			// wrap cannot choose the era: the client does. In another era
			// the moment never comes, which the judge reports as no fault
			// fired.
			fmt.Fprintf(stderr, "mcpchaos wrap: scenario %s needs a client of the %s era\n", sc.Name, sc.Era)
		}
	}

	if f.reports.wanted() && f.scenario == "" {
		f.scenario = "wrap"
	}
	if f.repro == "" {
		argv := []string{"mcpchaos", "wrap", "--seed", strconv.FormatUint(f.seed, 10)}
		extra := f.faults
		if sc != nil {
			argv = append(argv, "--scenario", sc.Selector())
			extra = f.faults[len(sc.Faults):]
		}
		for _, spec := range extra {
			argv = append(argv, "--fault", spec)
		}
		f.repro = suite.ShellQuote(append(append(argv, "--"), command...))
	}
	cfg := chaos.Config{
		Command:   command,
		Plan:      faults.NewPlan(f.seed, parsed),
		MaxLine:   f.maxLine,
		Grace:     f.grace,
		Stderr:    stderr,
		Tool:      "mcpchaos " + version,
		Role:      f.role,
		Scenario:  f.scenario,
		Expect:    f.expect,
		Repro:     f.repro,
		Deadline:  f.deadline,
		HangAfter: f.hangAfter,
		Probes:    f.pidFile != "",
	}
	rec, err := openSessionRecord(f.transcript, f.reports.wanted())
	if err != nil {
		return usageError(stderr, "wrap: %v", err)
	}
	if rec.recorder != nil {
		cfg.Recorder = rec.recorder
	}

	// Registered before the session starts, so that no SIGTERM finds us
	// with the default action; the session decides what each one does (a
	// linger fault ignores them for a while).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	session, err := chaos.Start(ctx, cfg, stdin, stdout)
	if err != nil {
		rec.discard()
		return usageError(stderr, "wrap: %v", err)
	}
	go session.Interrupts(sigs, cancel)
	if f.pidFile != "" {
		stopProbes := probeOnSignal(session, f.pidFile)
		defer stopProbes()
	}
	session.Wait()
	if err := rec.finish(); err != nil {
		fmt.Fprintf(stderr, "mcpchaos wrap: %v\n", err)
		return exitUsage
	}
	if rec.judge == nil {
		return exitOK
	}
	return rec.report("wrap", &f.reports, nil, reports.Target{Command: command}, "wrap", f.seed, sc, f.repro, f.quiet, stderr)
}

// faultsList prints what `mcpchaos faults` shows.
func runFaults(args []string, stdout, stderr io.Writer) int {
	if isHelp(args) {
		io.WriteString(stdout, "Usage: mcpchaos faults\n\nLists every fault family with its parameters, defaults and units, the\ntransports it works on, an example, and the trigger keys every fault takes.\n")
		return exitOK
	}
	if len(args) > 0 {
		return usageError(stderr, "faults takes no arguments")
	}
	var b strings.Builder
	b.WriteString("Faults (--fault NAME[:KEY=VALUE,...]):\n")
	for _, fam := range faults.Families() {
		fmt.Fprintf(&b, "\n  %s: %s\n", fam.Name, fam.Doc)
		for _, p := range fam.Params {
			fmt.Fprintf(&b, "      %s\n", p.Usage())
		}
		fmt.Fprintf(&b, "      fires %s the triggering message unless position= says otherwise\n", fam.Phase)
		if m := httpchaos.Meaning(fam.Name); m != "" {
			transports := "stdio, http"
			if fam.HTTPOnly {
				transports = "http only"
			}
			fmt.Fprintf(&b, "      transports: %s (mcpchaos proxy: %s)\n", transports, m)
		} else {
			b.WriteString("      transports: stdio only\n")
		}
		fmt.Fprintf(&b, "      example: --fault '%s'\n", fam.Example)
	}
	b.WriteString("\nTrigger keys, accepted by every fault:\n")
	for _, p := range faults.TriggerParams() {
		fmt.Fprintf(&b, "      %s\n", p.Usage())
	}
	io.WriteString(stdout, b.String())
	return exitOK
}

func runScenarios(args []string, stdout, stderr io.Writer) int {
	if isHelp(args) {
		io.WriteString(stdout, "Usage: mcpchaos scenarios\n\nLists the built-in scenarios (the default matrices of test, test-client,\ntest --url and test-client --server-url, and the extra presets) with their\nfault specs, and the bug classes each exposes.\n")
		return exitOK
	}
	if len(args) > 0 {
		return usageError(stderr, "scenarios takes no arguments")
	}
	var b strings.Builder
	list := func(title, command string) {
		b.WriteString(title)
		for _, p := range faults.Presets() {
			if p.For != command {
				continue
			}
			s := p.Scenario
			mark := ""
			if !p.Default {
				mark = " [not in the default matrix: run it with --scenario " + s.Name + "]"
			}
			fmt.Fprintf(&b, "\n  %s: %s%s\n", s.Name, s.Doc, mark)
			for _, f := range s.Faults {
				fmt.Fprintf(&b, "      --fault '%s'\n", f)
			}
			if s.Era != "" {
				fmt.Fprintf(&b, "      era %s\n", s.Era)
			}
			if w := s.Workload; w.Calls > 0 || w.Concurrency > 0 {
				fmt.Fprintf(&b, "      workload: %d tool calls, %d at a time\n", w.Calls, w.Concurrency)
			}
			if s.Workload.Hostile != "" {
				fmt.Fprintf(&b, "      workload: the %s hostile workload (mcpchaos test only)\n", s.Workload.Hostile)
			}
			if n := s.Sessions(); n > 1 {
				fmt.Fprintf(&b, "      %d sessions at once against one server (--sessions N)\n", n)
			}
			switch s.Expect {
			case "success":
				b.WriteString("      the client must succeed (exit 0)\n")
			case "failure":
				b.WriteString("      the client may fail (a call became impossible); it must not hang or crash\n")
			}
		}
	}
	list("Scenarios of mcpchaos test (--scenario NAME), each run against a fresh server after a no-fault baseline:\n", faults.ForServer)
	list("\nScenarios of mcpchaos test-client (--scenario NAME), each a fresh run of the client program:\n", faults.ForClient)
	list("\nScenarios of mcpchaos test --url (--scenario NAME), each through a fresh proxy session, against a fresh server when a command is given (the scenarios of mcpchaos test whose faults have an HTTP meaning run too):\n", faults.ForHTTPServer)
	list("\nScenarios of mcpchaos test-client --server-url (--scenario NAME), each a fresh run of the client program through a fresh proxy session; its default matrix also runs progress-before-response, list-changed-mid-call and slow-server of test-client:\n", faults.ForHTTPClient)
	b.WriteString("\nBug classes (DESIGN.md) and the scenarios that expose them:\n")
	for _, c := range faults.BugClasses {
		if len(c.Presets) == 0 {
			fmt.Fprintf(&b, "  %d. %s: no scenario yet (%s)\n", c.N, c.Summary, c.Pending)
			continue
		}
		fmt.Fprintf(&b, "  %d. %s: %s\n", c.N, c.Summary, strings.Join(c.Presets, ", "))
	}
	b.WriteString("\nYour own scenarios go in a scenario file (version: 1); run them with --scenario FILE or FILE#NAME.\n")
	io.WriteString(stdout, b.String())
	return exitOK
}

// isHelp reports whether args ask for a command's help and nothing else.
func isHelp(args []string) bool {
	return len(args) == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")
}
