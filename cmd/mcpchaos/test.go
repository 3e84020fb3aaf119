package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

func runTest(args []string, stdout, stderr io.Writer) int {
	flagArgs, command, hasCommand := splitCommand(args)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		m         matrixFlags
		calls     []string
		skipTools []string
		casesDir  string
		maxWait   time.Duration
		serverURL string
		headers   []string
		startWait time.Duration
		era       string
		sessions  int
	)
	m.register(fs, suite.DefaultDeadline, "how long a request may stay unanswered before it is a hang",
		"shutdown ladder wait: stdin closed, wait, SIGTERM, wait, SIGKILL")
	fs.DurationVar(&maxWait, "max-deadline", suite.DefaultMaxDeadline, "the longest a request that keeps sending progress notifications is waited for (each one restarts its --deadline)")
	fs.StringArrayVar(&calls, "call", nil, "call this tool, as `NAME=JSON` arguments (repeatable; default: every tool, arguments from its schema; a saved case records the calls, and with --cases, --call replaces the calls each case recorded)")
	fs.StringArrayVar(&skipTools, "skip-tool", nil, "never call the tool `NAME` (repeatable; a saved case records it, and with --cases, --skip-tool replaces the skipped tools each case recorded)")
	fs.StringVar(&serverURL, "url", "", "probe the HTTP MCP server at `URL` (streamable HTTP, or the legacy HTTP+SSE transport at .../sse) through the HTTP proxy; with a command after --, start that server first for each scenario; write the port as {port} (in the URL and the command, or read $PORT) for a port of each run's own, and the scenarios run side by side")
	fs.StringArrayVar(&headers, "header", nil, "send this header with every request to the --url server, as `NAME:VALUE` (repeatable; for a token: --header 'Authorization: Bearer ...')")
	fs.DurationVar(&startWait, "start-timeout", suite.DefaultStartTimeout, "with --url and a command, how long the server may take to listen")
	fs.StringVar(&era, "era", "auto", "the protocol `ERA` the probe speaks: auto (server/discover first, the 2026-07-28 revision, falling back to initialize, as a 2026 client does) or stateful (the initialize handshake alone, for a server of an earlier revision that fails on server/discover)")
	fs.IntVar(&sessions, "sessions", 0, "with --url, how many clients the scenarios of several sessions (sessions, sessions-one-ends) run at once against one server, `N` from 2 to 16 (default: 2)")
	fs.StringVar(&casesDir, "cases", "", "replay every regression case in `DIR` (against the server after --, else the command each case recorded; with the calls and skipped tools each case recorded, unless --call or --skip-tool is given) and say which still fail")
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos test [flags] [-- CMD [ARGS...]]\n       mcpchaos test --url URL [flags] [-- CMD [ARGS...]]\n\nProbes the stdio MCP server CMD (default: the bundled example server), or the\nHTTP MCP server at URL (started with CMD when given), through a no-fault\nbaseline and a matrix of fault scenarios, and judges what happened.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "test: %v (see mcpchaos test --help)", err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "test: unexpected argument %q; put the server command after --, as in mcpchaos test -- python server.py", fs.Arg(0))
	}
	if hasCommand && len(command) == 0 {
		return usageError(stderr, "test: nothing after --; give the server command, as in mcpchaos test -- python server.py")
	}
	if maxWait <= 0 {
		return usageError(stderr, "test: --max-deadline must be positive")
	}
	probeEra, err := parseEra(era)
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	if err := checkSessions(fs, sessions, serverURL); err != nil {
		return usageError(stderr, "test: %v", err)
	}
	ht := httpTest{url: serverURL, headers: headers, startWait: startWait, command: command,
		calls: calls, skipTools: skipTools, era: probeEra, maxWait: maxWait, sessions: sessions}
	if casesDir != "" {
		if fs.Changed("era") {
			return usageError(stderr, "test: --cases replays each case with the era it recorded; it takes no --era")
		}
		return runCases(fs, casesDir, ht, m, stdout, stderr)
	}
	if serverURL != "" {
		return runHTTPTest(fs, ht, m, stdout, stderr)
	}
	for _, f := range []string{"header", "start-timeout"} {
		if fs.Changed(f) {
			return usageError(stderr, "test: --%s goes with --url, for an HTTP server", f)
		}
	}
	if code, refused := refuseStdio(stderr, "mcpchaos test without --url (a stdio server)"); refused {
		return code
	}
	defaultTarget := !hasCommand
	if defaultTarget {
		self, err := os.Executable()
		if err != nil {
			return usageError(stderr, "test: cannot find the bundled example server: %v", err)
		}
		command = []string{self, "serve"}
	}
	selected, err := m.resolve(fs, faults.ForServer, faults.ServerScenarios())
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	probeCalls, err := parseCalls(calls)
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	fmt.Fprintf(stdout, "mcpchaos test: seed %d, %d scenario(s) against %s\n", m.seed, len(selected), suite.ShellQuote(command))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	progress := newProgress(stderr, selected)
	report, err := suite.Run(ctx, suite.Options{
		Progress:      progress,
		Command:       command,
		Scenarios:     selected,
		Seed:          m.seed,
		Deadline:      m.deadline,
		MaxDeadline:   maxWait,
		Grace:         m.grace,
		Parallel:      m.parallel,
		TranscriptDir: m.transcriptDir,
		Probe:         probe.Config{Calls: probeCalls, SkipTools: skipTools, Era: probeEra},
		Repro:         reproLine(command, defaultTarget, m.deadline, maxWait, m.selectorArgs, workloadArgs(calls, skipTools, probeEra)...),
		StatefulRepro: reproLine(command, defaultTarget, m.deadline, maxWait, m.selectorArgs, workloadArgs(calls, skipTools, probe.EraStateful)...),
		Tool:          "mcpchaos " + version,
		Version:       version,
		CaseDir:       m.saveCase,
	})
	progress.close()
	if err != nil {
		return runFailed(stderr, "test", "server", err)
	}
	return m.finish(report, "test", stdout, stderr)
}

// announceCases says how many cases --save-case wrote and how to replay them.
func announceCases(stdout io.Writer, report *reports.Report, dir, command string) {
	saved := 0
	for _, s := range report.Scenarios {
		if s.Outcome == reports.OutcomeFail {
			saved++
		}
	}
	fmt.Fprintf(stdout, "%d failing scenario run(s) saved as cases in %s; replay them with mcpchaos %s --cases %s\n", saved, dir, command, suite.ShellQuote([]string{dir}))
}

// casesFlagsOK refuses the flags --cases replaces, and checks the rest.
func casesFlagsOK(fs *pflag.FlagSet, command string, m matrixFlags) error {
	for _, f := range []string{"scenario", "save-case", "report", "report-format", "seed", "baseline", "write-baseline", "shard"} {
		if fs.Changed(f) {
			return fmt.Errorf("%s: --cases replays the recorded scenarios with their recorded seeds; it takes no --%s", command, f)
		}
	}
	if _, err := m.resolve(fs, command, nil); err != nil {
		return fmt.Errorf("%s: %v", command, err)
	}
	return nil
}

// workloadArgs are the --call and --skip-tool flags given.
func workloadArgs(calls, skipTools []string, era string) []string {
	var out []string
	if era != "" {
		out = append(out, "--era", era)
	}
	for _, c := range calls {
		out = append(out, "--call", c)
	}
	for _, s := range skipTools {
		out = append(out, "--skip-tool", s)
	}
	return out
}

// parseEra reads --era: "" (auto) negotiates, as a 2026 client does;
// probe.EraStateful skips server/discover.
func parseEra(s string) (string, error) {
	switch s {
	case "auto":
		return "", nil
	case probe.EraStateful:
		return s, nil
	}
	return "", fmt.Errorf("--era %q: want auto or stateful (the probe speaks the stateless revision whenever the server offers it, under auto)", s)
}

// casesRepro is the repro line of a replayed case: the replay itself.
func casesRepro(command, dir, server string, target []string, flags ...string) func(string, uint64) string {
	return func(string, uint64) string {
		argv := append([]string{"mcpchaos", command, "--cases", dir}, flags...)
		if server != "" {
			argv = append(argv, "--server", server)
		}
		if len(target) > 0 {
			argv = append(append(argv, "--"), target...)
		}
		return suite.ShellQuote(argv)
	}
}

// finishReplay prints each target's summary, then one line per case, and
// returns the replay's exit status.
func finishReplay(replay *suite.Replay, stdout io.Writer) int {
	for i, r := range replay.Reports {
		fmt.Fprintf(stdout, "\nagainst %s%s:\n", suite.ShellQuote(r.Target.Command), workloadText(replay.Workloads, i))
		reports.WriteSummary(stdout, r)
	}
	fmt.Fprintln(stdout)
	for _, c := range replay.Cases {
		fmt.Fprintln(stdout, c.Line())
	}
	return replay.ExitCode()
}

// runCases is test --cases DIR: every case replayed, one line each. The
// command after -- and --url replace the recorded server; --header and
// --start-timeout serve the cases over HTTP.
func runCases(fs *pflag.FlagSet, dir string, t httpTest, m matrixFlags, stdout, stderr io.Writer) int {
	if err := casesFlagsOK(fs, "test", m); err != nil {
		return usageError(stderr, "%v", err)
	}
	probeCalls, err := parseCalls(t.calls)
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	header, err := parseHeaders(t.headers)
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	if t.startWait <= 0 {
		return usageError(stderr, "test: --start-timeout must be positive")
	}
	var (
		u       *url.URL
		against []string
		// targetArgs are the flags that name the server in a repro line.
		targetArgs []string
	)
	if t.url != "" {
		if u, err = parseServerURL(t.url); err != nil {
			return usageError(stderr, "test: --url %v", err)
		}
		against = append(against, u.Redacted())
		targetArgs = []string{"--url", u.String()}
	}
	targetArgs = append(targetArgs, headerArgs(t.headers)...)
	if fs.Changed("start-timeout") {
		targetArgs = append(targetArgs, "--start-timeout", t.startWait.String())
	}
	if len(t.command) > 0 {
		against = append(against, suite.ShellQuote(t.command))
	}
	target := "the server each case recorded"
	if len(against) > 0 {
		target = strings.Join(against, ", served by ")
	}
	fmt.Fprintf(stdout, "mcpchaos test: replaying the cases in %s against %s\n", dir, target)
	// The flags replace the recorded workload, as the command after --
	// replaces the recorded command: to try a case with other calls. The
	// replay then does not recreate the recorded run, so say so.
	var given []string
	if fs.Changed("call") {
		given = append(given, "--call")
	} else {
		t.calls, probeCalls = nil, nil
	}
	if fs.Changed("skip-tool") {
		given = append(given, "--skip-tool")
	} else {
		t.skipTools = nil
	}
	if len(given) > 0 {
		fmt.Fprintf(stdout, "mcpchaos test: %s replaces what each case recorded; the replay may not recreate the recorded runs\n", strings.Join(given, " and "))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	replay, err := suite.ReplayCases(ctx, suite.Options{
		Command:       t.command,
		URL:           u,
		Header:        header,
		StartTimeout:  t.startWait,
		Seed:          m.seed,
		Deadline:      m.deadline,
		MaxDeadline:   t.maxWait,
		Grace:         m.grace,
		Parallel:      m.parallel,
		TranscriptDir: m.transcriptDir,
		Probe:         probe.Config{Calls: probeCalls, SkipTools: t.skipTools},
		Repro:         casesRepro("test", dir, "", t.command, append(targetArgs, workloadArgs(t.calls, t.skipTools, "")...)...),
		Tool:          "mcpchaos " + version,
		Version:       version,
	}, dir)
	if err != nil {
		return runFailed(stderr, "test", "server", err)
	}
	return finishReplay(replay, stdout)
}

// workloadText describes the probe workload of a replay's i-th run, when
// it is not the default one: the runs of one target differ by it.
func workloadText(ws []suite.Workload, i int) string {
	if i >= len(ws) || ws[i].IsZero() {
		return ""
	}
	var parts []string
	if ws[i].Calls != nil {
		var calls []string
		for _, c := range ws[i].Calls {
			calls = append(calls, c.Tool+"="+c.Arguments)
		}
		parts = append(parts, "calling "+suite.ShellQuote(calls))
	}
	if ws[i].SkipTools != nil {
		parts = append(parts, "skipping "+strings.Join(ws[i].SkipTools, ", "))
	}
	return ", " + strings.Join(parts, ", ")
}

// finishReport prints the summary, writes the JSON report, and returns the
// exit status the report calls for.
func finishReport(report *reports.Report, out *reportOutputs, strict bool, stdout, stderr io.Writer) int {
	reports.WriteSummary(stdout, report)
	if err := out.write(report, stdout); err != nil {
		return usageError(stderr, "%v", err)
	}
	return report.ExitCode(strict)
}

// reproLine renders the command that replays one scenario; workload are
// the --call and --skip-tool flags the run was given, without which the
// replay would make other calls.
func reproLine(command []string, defaultTarget bool, deadline, maxDeadline time.Duration, selector func(string) []string, workload ...string) func(string, uint64) string {
	return func(scenario string, seed uint64) string {
		argv := append(append([]string{"mcpchaos", "test"}, selector(scenario)...), "--seed", fmt.Sprint(seed))
		if deadline != suite.DefaultDeadline {
			argv = append(argv, "--deadline", deadline.String())
		}
		if maxDeadline != suite.DefaultMaxDeadline {
			argv = append(argv, "--max-deadline", maxDeadline.String())
		}
		argv = append(argv, workload...)
		if !defaultTarget {
			argv = append(append(argv, "--"), command...)
		}
		return suite.ShellQuote(argv)
	}
}

func parseCalls(specs []string) ([]probe.Call, error) {
	var out []probe.Call
	for _, s := range specs {
		name, args, ok := strings.Cut(s, "=")
		if !ok {
			args = "{}"
		}
		if name == "" {
			return nil, fmt.Errorf("--call %q: no tool name; write NAME=JSON, as in --call 'echo={\"text\":\"hi\"}'", s)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(args), &obj); err != nil {
			return nil, fmt.Errorf("--call %s: the arguments are not a JSON object: %v", name, err)
		}
		out = append(out, probe.Call{Tool: name, Args: json.RawMessage(args)})
	}
	return out, nil
}

func writeReport(path string, r *reports.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot write the report: %w", err)
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		return fmt.Errorf("writing the report: %w", err)
	}
	return f.Close()
}

func lastLines(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}
