package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/suite"
)

func runTestClient(args []string, stdout, stderr io.Writer) int {
	flagArgs, command, hasCommand := splitCommand(args)
	fs := pflag.NewFlagSet("test-client", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		m         matrixFlags
		server    string
		casesDir  string
		serverURL string
		startWait time.Duration
		hangAfter time.Duration
		clients   int
	)
	fs.StringVar(&server, "server", "", "the server `CMD` the client talks to, behind mcpchaos (default: the bundled example server); with --server-url, the command that serves that URL, started for each scenario")
	fs.StringVar(&serverURL, "server-url", "", "test the client over HTTP: the MCP endpoint `URL` of the server; the client gets the proxy's URL in $"+suite.ServerURLEnv+"; write the port as {port} (in the URL and --server, or read $PORT) for a server of each run's own on a port of its own, and the scenarios run side by side")
	fs.DurationVar(&startWait, "start-timeout", suite.DefaultStartTimeout, "with --server-url and --server, how long the server may take to listen")
	m.register(fs, clientDeadline, "how long the client program may take; past it, it is late (a warning when it then ends on its own)", "shutdown ladder wait for the server")
	fs.DurationVar(&hangAfter, "hang-after", suite.DefaultHangAfter, "the hang horizon: a client program still running then is hung, and is stopped (at least --deadline; the default is twice the TypeScript SDK's 60s request timeout, the longest default of the MCP SDKs)")
	fs.StringVar(&casesDir, "cases", "", "replay every regression case in `DIR` (the client after -- and --server, else the ones each case recorded) and say which still fail")
	fs.IntVar(&clients, "clients", 1, "with --server-url, run `N` copies of the client program at once against one server in every run (2 to 16), each judged on its own, and the copies side by side (what crossed between their sessions)")
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos test-client [flags] -- CLIENT_CMD [ARGS...]\n       mcpchaos test-client --server-url URL [--server CMD] [flags] -- CLIENT_CMD [ARGS...]\n\nRuns the client program once per scenario. Over stdio it must launch the server\ngiven in $%s (a JSON array of argv); over HTTP (--server-url) it must\nconnect to the MCP endpoint in $%s. It must exit 0 on success. Its\nhangs, crashes and failures under faults are judged.\n\n%s", suite.ServerCommandEnv, suite.ServerURLEnv, fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "test-client: %v (see mcpchaos test-client --help)", err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "test-client: unexpected argument %q; put the client command after --, as in mcpchaos test-client -- python my_client.py", fs.Arg(0))
	}
	if hasCommand && len(command) == 0 {
		return usageError(stderr, "test-client: nothing after --; give the client command, as in mcpchaos test-client -- python my_client.py")
	}
	if !hasCommand && casesDir == "" {
		return usageError(stderr, "test-client: no client command; put it after --, as in mcpchaos test-client -- python my_client.py")
	}
	self, err := os.Executable()
	if err != nil {
		return usageError(stderr, "test-client: cannot find the mcpchaos executable: %v", err)
	}
	if hangAfter <= 0 || fs.Changed("hang-after") && hangAfter < m.deadline {
		return usageError(stderr, "test-client: --hang-after %s: the hang horizon must be at least --deadline (%s); give --hang-after equal to --deadline to stop a late client at its deadline", hangAfter, m.deadline)
	}
	if casesDir != "" {
		return runClientCases(fs, casesDir, command, server, serverURL, startWait, hangAfter, self, m, stdout, stderr)
	}
	if serverURL == "" && fs.Changed("start-timeout") {
		return usageError(stderr, "test-client: --start-timeout is how long the server of --server-url may take to listen; there is no --server-url")
	}
	if fs.Changed("clients") {
		switch {
		case serverURL == "":
			return usageError(stderr, "test-client: --clients goes with --server-url: several copies of the client share one HTTP server, and over stdio each copy would start a server of its own")
		case clients < 1 || clients > faults.MaxSessions:
			return usageError(stderr, "test-client: --clients %d: run 1 to %d copies of the client at once (1 is one client, the default)", clients, faults.MaxSessions)
		}
	}
	serverArgv, err := serverCommand(server)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	opts := suite.ClientOptions{
		Client:        command,
		Server:        serverArgv,
		Deadline:      m.deadline,
		HangAfter:     hangAfter,
		Grace:         m.grace,
		Parallel:      m.parallel,
		TranscriptDir: m.transcriptDir,
		Version:       version,
		CaseDir:       m.saveCase,
	}
	var (
		selected []faults.Scenario
		against  string
	)
	if serverURL != "" {
		target, err := clientServerFlags.target(fs, serverURL, serverArgv, startWait, m.parallel)
		if err != nil {
			return usageError(stderr, "%v", err)
		}
		opts.ServerURL, opts.StartTimeout, opts.Clients, opts.PortPerRun = target.url, target.startWait, clients, target.perRun
		targetArgs := target.args
		if clients > 1 {
			targetArgs = append(slices.Clone(targetArgs), "--clients", strconv.Itoa(clients))
		}
		opts.Repro = clientRepro(command, server, m.deadline, hangAfter, m.selectorArgs, targetArgs...)
		if selected, err = m.resolve(fs, faults.ForHTTPClient, faults.HTTPClientScenarios()); err != nil {
			return usageError(stderr, "test-client: %v", err)
		}
		against = target.String()
	} else {
		if code, refused := refuseStdio(stderr, "mcpchaos test-client without --server-url (a client of a stdio server)"); refused {
			return code
		}
		if opts.Server == nil {
			opts.Server = []string{self, "serve"}
		}
		opts.Self = []string{self}
		opts.Repro = clientRepro(command, server, m.deadline, hangAfter, m.selectorArgs)
		if selected, err = m.resolve(fs, faults.ForClient, faults.ClientScenarios()); err != nil {
			return usageError(stderr, "test-client: %v", err)
		}
		against = suite.ShellQuote(opts.Server)
	}
	opts.Scenarios, opts.Seed = selected, m.seed
	fmt.Fprintf(stdout, "mcpchaos test-client: seed %d, %d scenario(s): %s against %s\n", m.seed, len(selected), suite.ShellQuote(command), against)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	progress := newProgress(stderr, selected)
	opts.Progress = progress
	report, err := suite.RunClient(ctx, opts)
	progress.close()
	if err != nil {
		return runFailed(stderr, "test-client", "client", err)
	}
	return m.finish(report, "test-client", stdout, stderr)
}

// clientServerFlags name test-client's server flags in its messages.
var clientServerFlags = serverFlags{name: "test-client", urlFlag: "--server-url", from: "--server", none: "--server"}

// serverCommand splits --server into argv; nil when it was not given.
func serverCommand(server string) ([]string, error) {
	if server == "" {
		return nil, nil
	}
	argv, err := splitWords(server)
	if err != nil || len(argv) == 0 {
		return nil, fmt.Errorf("test-client: --server %q: give a command line, as in --server 'python server.py'", server)
	}
	return argv, nil
}

// runClientCases is test-client --cases DIR: the client after --, --server
// and --server-url replace the recorded ones.
func runClientCases(fs *pflag.FlagSet, dir string, command []string, server, serverURL string, startWait, hangAfter time.Duration, self string, m matrixFlags, stdout, stderr io.Writer) int {
	if err := casesFlagsOK(fs, "test-client", m); err != nil {
		return usageError(stderr, "%v", err)
	}
	serverArgv, err := serverCommand(server)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	if startWait <= 0 {
		return usageError(stderr, "test-client: --start-timeout must be positive")
	}
	opts := suite.ClientOptions{
		Client:        command,
		Server:        serverArgv,
		Self:          []string{self},
		StartTimeout:  startWait,
		Seed:          m.seed,
		Deadline:      m.deadline,
		HangAfter:     hangAfter,
		Grace:         m.grace,
		Parallel:      m.parallel,
		TranscriptDir: m.transcriptDir,
		Version:       version,
	}
	var targetArgs []string
	if serverURL != "" {
		if opts.ServerURL, err = parseServerURL(serverURL); err != nil {
			return usageError(stderr, "test-client: --server-url %v", err)
		}
		targetArgs = []string{"--server-url", opts.ServerURL.String()}
	}
	if fs.Changed("start-timeout") {
		targetArgs = append(targetArgs, "--start-timeout", startWait.String())
	}
	opts.Repro = casesRepro("test-client", dir, server, command, targetArgs...)
	fmt.Fprintf(stdout, "mcpchaos test-client: replaying the cases in %s\n", dir)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	replay, err := suite.ReplayClientCases(ctx, opts, dir)
	if err != nil {
		return runFailed(stderr, "test-client", "client", err)
	}
	return finishReplay(replay, stdout)
}

// clientDeadline is test-client's default --deadline: a client program
// starts an interpreter and a server, so it gets longer than one request.
const clientDeadline = 30 * time.Second

func clientRepro(command []string, server string, deadline, hangAfter time.Duration, selector func(string) []string, target ...string) func(string, uint64) string {
	return func(scenario string, seed uint64) string {
		argv := append(append(append([]string{"mcpchaos", "test-client"}, target...), selector(scenario)...), "--seed", fmt.Sprint(seed))
		if server != "" {
			argv = append(argv, "--server", server)
		}
		if deadline != clientDeadline {
			argv = append(argv, "--deadline", deadline.String())
		}
		if hangAfter != suite.DefaultHangAfter {
			argv = append(argv, "--hang-after", hangAfter.String())
		}
		return suite.ShellQuote(append(append(argv, "--"), command...))
	}
}

// splitWords splits a command line as a POSIX shell would for simple cases:
// spaces separate words, quotes group them, a backslash escapes.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	runes := []rune(s)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote == '\'':
			cur.WriteRune(r)
		case r == '\\' && i+1 < len(runes):
			i++
			cur.WriteRune(runes[i])
			inWord = true
		case quote == 0 && (r == '\'' || r == '"'):
			quote, inWord = r, true
		case quote == 0 && (r == ' ' || r == '\t' || r == '\n'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
