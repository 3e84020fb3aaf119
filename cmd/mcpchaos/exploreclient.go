package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/explore"
	"github.com/mcpchaos/mcpchaos/suite"
)

// runExploreClient is explore-client: explore's search against a client
// program, run as test-client runs it.
func runExploreClient(args []string, stdout, stderr io.Writer) int {
	flagArgs, command, hasCommand := splitCommand(args)
	fs := pflag.NewFlagSet("explore-client", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		e         exploreFlags
		server    string
		serverURL string
		startWait time.Duration
		hangAfter time.Duration
	)
	fs.StringVar(&server, "server", "", "the server `CMD` the client talks to, behind mcpchaos (default: the bundled example server); with --server-url, the command that serves that URL, started for each run")
	fs.StringVar(&serverURL, "server-url", "", "explore the client over HTTP: the MCP endpoint `URL` of the server; the client gets the proxy's URL in $"+suite.ServerURLEnv)
	fs.DurationVar(&startWait, "start-timeout", suite.DefaultStartTimeout, "with --server-url and --server, how long the server may take to listen")
	e.register(fs, clientDeadline, "how long the client program may take; past it, it is late (a warning when it then ends on its own)", "shutdown ladder wait for the server")
	fs.DurationVar(&hangAfter, "hang-after", suite.DefaultHangAfter, "the hang horizon: a client program still running then is hung, and is stopped (at least --deadline)")
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos explore-client [flags] -- CLIENT_CMD [ARGS...]\n       mcpchaos explore-client --server-url URL [--server CMD] [flags] -- CLIENT_CMD [ARGS...]\n\nSearches the fault space of a client program, as explore does a server's: the\nclient is run as test-client runs it (over stdio it must launch the server in\n$%s, over HTTP connect to $%s, and exit 0 on success), once\nwithout faults, then once per fault point of the server's side of its session,\nthen seeded combinations. Each finding is shrunk to its smallest plan.\n\n%s", suite.ServerCommandEnv, suite.ServerURLEnv, fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "explore-client: %v (see mcpchaos explore-client --help)", err)
	}
	switch {
	case fs.NArg() > 0:
		return usageError(stderr, "explore-client: unexpected argument %q; put the client command after --, as in mcpchaos explore-client -- python my_client.py", fs.Arg(0))
	case !hasCommand || len(command) == 0:
		return usageError(stderr, "explore-client: no client command; put it after --, as in mcpchaos explore-client -- python my_client.py")
	}
	shard, err := e.check(fs, "explore-client")
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	if hangAfter <= 0 || fs.Changed("hang-after") && hangAfter < e.deadline {
		return usageError(stderr, "explore-client: --hang-after %s: the hang horizon must be at least --deadline (%s)", hangAfter, e.deadline)
	}
	self, err := os.Executable()
	if err != nil {
		return usageError(stderr, "explore-client: cannot find the mcpchaos executable: %v", err)
	}
	serverArgv, err := serverCommand(server)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	o := suite.ClientOptions{
		Client: command, Server: serverArgv, Seed: e.seed,
		Deadline: e.deadline, HangAfter: hangAfter, Grace: e.grace, Parallel: e.parallel,
		TranscriptDir: e.transcriptDir, CaseDir: e.saveCase, Version: version,
	}
	var targetArgs []string
	against := ""
	if serverURL != "" {
		target, err := exploreClientServerFlags.target(fs, serverURL, serverArgv, startWait, e.parallel)
		if err != nil {
			return usageError(stderr, "%v", err)
		}
		o.ServerURL, o.StartTimeout, o.PortPerRun = target.url, target.startWait, target.perRun
		targetArgs = target.args
		against = target.String()
	} else {
		if fs.Changed("start-timeout") {
			return usageError(stderr, "explore-client: --start-timeout is how long the server of --server-url may take to listen; there is no --server-url")
		}
		if code, refused := refuseStdio(stderr, "mcpchaos explore-client without --server-url (a client of a stdio server)"); refused {
			return code
		}
		if o.Server == nil {
			o.Server = []string{self, "serve"}
		}
		o.Self = []string{self}
		against = suite.ShellQuote(o.Server)
	}
	fmt.Fprintf(stdout, "mcpchaos explore-client: seed %d, budget %s: %s against %s\n", e.seed, e.budget, suite.ShellQuote(command), against)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	trials, err := suite.NewClientTrials(ctx, o)
	if err != nil {
		return runFailed(stderr, "explore-client", "client", err)
	}
	defer trials.Close()
	repro := func(g *explore.Group) string {
		return clientRepro(command, server, e.deadline, hangAfter, func(string) []string { return faultArgs(g) }, targetArgs...)("", e.seed)
	}
	return e.search(ctx, trials, start, shard, repro, "test-client", stdout, stderr)
}

// exploreClientServerFlags name explore-client's server flags in its
// messages.
var exploreClientServerFlags = serverFlags{name: "explore-client", urlFlag: "--server-url", from: "--server", none: "--server"}
