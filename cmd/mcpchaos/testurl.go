package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/suite"
)

// httpTest is what test --url is given besides the matrix flags.
type httpTest struct {
	url       string
	headers   []string
	startWait time.Duration
	command   []string
	calls     []string
	skipTools []string
	era       string // the probe's: "" or probe.EraStateful
	maxWait   time.Duration
	// sessions is --sessions: how many clients the scenarios of several
	// sessions run at once (0: their own, 2).
	sessions int
}

// runHTTPTest is test --url URL [-- CMD]: the matrix through the HTTP proxy.
func runHTTPTest(fs *pflag.FlagSet, t httpTest, m matrixFlags, stdout, stderr io.Writer) int {
	target, err := testServerFlags.target(fs, t.url, t.command, t.startWait, m.parallel)
	if err != nil {
		return usageError(stderr, "%v", err)
	}
	header, err := parseHeaders(t.headers)
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	selected, err := m.resolve(fs, faults.ForHTTPServer, faults.HTTPServerScenariosFor(target.url, len(httpchaos.CredentialHeaders(header)) > 0))
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	probeCalls, err := parseCalls(t.calls)
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	fmt.Fprintf(stdout, "mcpchaos test: seed %d, %d scenario(s) against %s\n", m.seed, len(selected), target)
	targetArgs := slices.Concat(target.args, headerArgs(t.headers))
	if t.sessions > 0 {
		targetArgs = append(targetArgs, "--sessions", strconv.Itoa(t.sessions))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	progress := newProgress(stderr, selected)
	report, err := suite.Run(ctx, suite.Options{
		Progress:      progress,
		Command:       t.command,
		URL:           target.url,
		Header:        header,
		StartTimeout:  target.startWait,
		Scenarios:     selected,
		Seed:          m.seed,
		Deadline:      m.deadline,
		MaxDeadline:   t.maxWait,
		Grace:         m.grace,
		Parallel:      m.parallel,
		TranscriptDir: m.transcriptDir,
		Probe:         probe.Config{Calls: probeCalls, SkipTools: t.skipTools, Era: t.era},
		Repro:         reproLine(t.command, len(t.command) == 0, m.deadline, t.maxWait, m.selectorArgs, append(targetArgs, workloadArgs(t.calls, t.skipTools, t.era)...)...),
		Tool:          "mcpchaos " + version,
		Version:       version,
		CaseDir:       m.saveCase,
		Sessions:      t.sessions,
		PortPerRun:    target.perRun,
	})
	progress.close()
	if err != nil {
		return runFailed(stderr, "test", "server", err)
	}
	return m.finish(report, "test", stdout, stderr)
}

// checkSessions refuses a --sessions that is not a number of clients a
// scenario can run against one server.
func checkSessions(fs *pflag.FlagSet, n int, url string) error {
	if !fs.Changed("sessions") {
		return nil
	}
	if url == "" {
		return errors.New("--sessions goes with --url: several clients at once share one HTTP server, and a stdio server serves the one client that started it")
	}
	if n < 2 || n > faults.MaxSessions {
		return fmt.Errorf("--sessions %d: the scenarios of several sessions (sessions, sessions-one-ends) run 2 to %d clients at once against one server (the default is 2)", n, faults.MaxSessions)
	}
	return nil
}

// testServerFlags name test's server flags in its messages.
var testServerFlags = serverFlags{name: "test", urlFlag: "--url", from: "the command after --", none: "command"}

// serverFlags say how a command names the flags that give its HTTP
// server, for its messages.
type serverFlags struct {
	name    string // the command: test, test-client
	urlFlag string // --url, --server-url
	from    string // where a server command comes from: "the command after --", "--server"
	none    string // what is missing without one: "command", "--server"
}

// httpTarget is the HTTP server a matrix runs against: its MCP endpoint
// and, when given, the command that serves it, started for each scenario.
type httpTarget struct {
	url       *url.URL
	command   []string
	startWait time.Duration
	// args are the flags that name it in a repro line.
	args []string
	// perRun says the URL's port was {port}: each run picks its own.
	perRun bool
}

// target checks the flags that give the HTTP server.
func (sf serverFlags) target(fs *pflag.FlagSet, rawURL string, command []string, startWait time.Duration, parallel int) (httpTarget, error) {
	u, perRun, err := parseServerURLTemplate(rawURL)
	switch {
	case err != nil:
		return httpTarget{}, fmt.Errorf("%s: %s %v", sf.name, sf.urlFlag, err)
	case perRun && len(command) == 0:
		return httpTarget{}, fmt.Errorf("%s: %s %q: %s is a port mcpchaos picks for each run and starts the server on, so give the server's command (%s), with %s or $PORT where it takes its port", sf.name, sf.urlFlag, rawURL, suite.PortPlaceholder, sf.from, suite.PortPlaceholder)
	case startWait <= 0:
		return httpTarget{}, fmt.Errorf("%s: --start-timeout must be positive", sf.name)
	case fs.Changed("start-timeout") && len(command) == 0:
		return httpTarget{}, fmt.Errorf("%s: --start-timeout is how long the server started from %s may take to listen; there is no %s", sf.name, sf.from, sf.none)
	case len(command) > 0 && parallel > 1 && !perRun:
		how := fmt.Sprintf(", write the port as %s (a port for each run) in %s and in %s, as in %s 'http://127.0.0.1:%s/mcp'", suite.PortPlaceholder, sf.urlFlag, sf.from, sf.urlFlag, suite.PortPlaceholder)
		return httpTarget{}, fmt.Errorf("%s: --parallel %d: each scenario starts the server from %s on the port of %s, so they run one at a time (leave out --parallel%s, or start the server yourself and leave out %s)", sf.name, parallel, sf.from, sf.urlFlag, how, sf.from)
	}
	t := httpTarget{url: u, command: command, startWait: startWait, args: []string{sf.urlFlag, u.String()}, perRun: perRun}
	if perRun {
		t.args[1] = rawURL // {port} as written; u holds port 0 in its place
	}
	if fs.Changed("start-timeout") {
		t.args = append(t.args, "--start-timeout", startWait.String())
	}
	return t, nil
}

// String names the target for people: secrets in the URL redacted.
func (t httpTarget) String() string {
	s := t.url.Redacted()
	if t.perRun {
		s = suite.URLTemplate(t.url) + " (a port for each run)"
	}
	if len(t.command) > 0 {
		s += ", served by " + suite.ShellQuote(t.command)
	}
	return s
}

// parseServerURL checks an MCP endpoint URL given on the command line.
func parseServerURL(s string) (*url.URL, error) {
	if suite.HasPort(s) {
		return nil, fmt.Errorf("%q: %s (a port for each run) is not taken by a replay of cases (a case saved with {port} replays on ports of its own): give the server's port", s, suite.PortPlaceholder)
	}
	u, _, err := parseServerURLTemplate(s)
	return u, err
}

// parseServerURLTemplate is parseServerURL of a URL whose port may be
// {port} (perRun): port 0 stands for it in u.
func parseServerURLTemplate(s string) (u *url.URL, perRun bool, err error) {
	u, perRun, err = suite.ParseURLTemplate(s)
	switch {
	case err != nil:
		return nil, false, fmt.Errorf("%q is not a URL: %v", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, false, fmt.Errorf("%q: give the server's MCP endpoint as an http:// or https:// URL, as in http://127.0.0.1:3000/mcp", s)
	case u.Host == "":
		return nil, false, fmt.Errorf("%q has no host, as in http://127.0.0.1:3000/mcp", s)
	}
	return u, perRun, nil
}

// parseHeaders reads --header NAME:VALUE flags.
func parseHeaders(specs []string) (http.Header, error) {
	h := http.Header{}
	for _, s := range specs {
		name, value, ok := strings.Cut(s, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("--header %q: write NAME:VALUE, as in --header 'Authorization: Bearer TOKEN'", s)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// sensitiveHeaders are left out of repro lines (which reports carry): the
// line names the header, and whoever replays it puts the value back.
var sensitiveHeaders = []string{"authorization", "cookie", "token", "secret", "key", "password"}

// headerArgs are the --header flags of a repro line, secrets redacted.
func headerArgs(specs []string) []string {
	var out []string
	for _, s := range specs {
		name, _, _ := strings.Cut(s, ":")
		lower := strings.ToLower(name)
		for _, w := range sensitiveHeaders {
			if strings.Contains(lower, w) {
				s = strings.TrimSpace(name) + ": REDACTED"
				break
			}
		}
		out = append(out, "--header", s)
	}
	return out
}
