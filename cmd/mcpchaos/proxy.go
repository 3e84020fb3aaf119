package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// defaultListen is the proxy's address unless --listen says otherwise.
const defaultListen = "127.0.0.1:8931"

type proxyFlags struct {
	listen, upstream   string
	scenarios, faults  []string
	seed               uint64
	transcript         string
	reports            reportOutputs
	allowRemote, quiet bool
	duration, deadline time.Duration
}

func runProxy(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("proxy", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f proxyFlags
	fs.StringVar(&f.listen, "listen", defaultListen, "`ADDR` to listen on; loopback unless --allow-remote")
	fs.StringVar(&f.upstream, "upstream", "", "the server's MCP endpoint `URL` (streamable HTTP, or the legacy transport's /sse)")
	fs.StringArrayVar(&f.faults, "fault", nil, "fault `SPEC` to inject (repeatable; mcpchaos faults marks those that work on HTTP)")
	fs.StringArrayVar(&f.scenarios, "scenario", nil, "inject the faults of one scenario: a built-in `NAME`, a scenario FILE, or FILE#NAME; --fault adds to them")
	fs.Uint64Var(&f.seed, "seed", 0, "seed for every random decision (default: random, printed at start)")
	fs.StringVar(&f.transcript, "transcript", "", "write the session's events to `FILE` as JSON lines")
	f.reports.register(fs, "judge the session when it ends and write the mcpchaos.report/v1 JSON to `FILE`")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a --listen address other than loopback")
	fs.DurationVar(&f.duration, "duration", 0, "end the session after this long (default: at SIGINT or SIGTERM)")
	fs.DurationVar(&f.deadline, "deadline", 0, "request deadline the judge holds the server to (default 5s)")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print the start line on stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos proxy --upstream URL [flags]\n\nA reverse proxy for MCP over HTTP (streamable HTTP and the legacy HTTP+SSE\ntransport): point the client at it, and it relays to the upstream server,\ninjecting the given faults, until SIGINT, SIGTERM or --duration ends the session.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "proxy: %v (see mcpchaos proxy --help)", err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "proxy: unexpected argument %q (the upstream goes in --upstream URL)", fs.Arg(0))
	}
	if f.upstream == "" {
		return usageError(stderr, "proxy: no --upstream; give the server's MCP endpoint, as in --upstream http://127.0.0.1:3000/mcp")
	}
	up, err := url.Parse(f.upstream)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return usageError(stderr, "proxy: --upstream %q is not an http:// or https:// URL", f.upstream)
	}
	if err := checkListen(f.listen, f.allowRemote); err != nil {
		return usageError(stderr, "proxy: %v", err)
	}
	if err := f.reports.parse(true); err != nil {
		return usageError(stderr, "proxy: %v", err)
	}
	var sc *faults.Scenario
	if len(f.scenarios) > 1 {
		return usageError(stderr, "proxy: --scenario given %d times; one session runs one scenario (add faults with --fault)", len(f.scenarios))
	}
	if len(f.scenarios) == 1 {
		got, err := relayScenario("proxy", f.scenarios[0], f.reports.wanted())
		if err != nil {
			return usageError(stderr, "proxy: %v", err)
		}
		sc = &got
		f.faults = append(slices.Clone(got.Faults), f.faults...)
		if got.Seed != nil && !fs.Changed("seed") {
			f.seed = *got.Seed
		}
	}
	var parsed []*faults.Fault
	for _, spec := range f.faults {
		flt, err := faults.Parse(spec)
		if err != nil {
			return usageError(stderr, "proxy: %v", err)
		}
		if err := httpchaos.Supports(flt.Family.Name); err != nil {
			return usageError(stderr, "proxy: --fault %s: %v", spec, err)
		}
		if flt.Family.Name == "signal" {
			return usageError(stderr, "proxy: --fault %s: the proxy does not start the server, so it has no process to signal; run mcpchaos test --url URL -- CMD to signal a server mcpchaos starts", spec)
		}
		parsed = append(parsed, flt)
	}
	if !fs.Changed("seed") && (sc == nil || sc.Seed == nil) {
		f.seed = rand.Uint64()
	}
	if err := reachable(up); err != nil {
		return usageError(stderr, "proxy: the upstream %s cannot be reached: %v (is the server running?)", up, err)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return usageError(stderr, "proxy: cannot listen on %s: %v (pick another --listen port)", f.listen, err)
	}

	argv := []string{"mcpchaos", "proxy", "--upstream", f.upstream, "--seed", strconv.FormatUint(f.seed, 10)}
	extra := f.faults
	name := "proxy"
	if sc != nil {
		argv = append(argv, "--scenario", sc.Selector())
		extra, name = f.faults[len(sc.Faults):], sc.Name
	}
	for _, spec := range extra {
		argv = append(argv, "--fault", spec)
	}
	repro := suite.ShellQuote(argv)

	rec, err := openSessionRecord(f.transcript, f.reports.wanted())
	if err != nil {
		ln.Close()
		return usageError(stderr, "proxy: %v", err)
	}
	cfg := httpchaos.Config{Upstream: up, Plan: faults.NewPlan(f.seed, parsed), Tool: "mcpchaos " + version,
		Scenario: name, Repro: repro, Deadline: f.deadline}
	if rec.recorder != nil {
		cfg.Recorder = rec.recorder
	}
	proxy, err := httpchaos.New(cfg)
	if err != nil {
		ln.Close()
		rec.discard()
		return usageError(stderr, "proxy: %v", err)
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	endpoint := "http://" + ln.Addr().String() + up.EscapedPath()
	if !f.quiet {
		fmt.Fprintf(stderr, "mcpchaos proxy: seed %d, %d fault(s); point the client at %s (relayed to %s); Ctrl-C ends the session\n", f.seed, len(parsed), endpoint, up)
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var timeout <-chan time.Time
	if f.duration > 0 {
		timer := time.NewTimer(f.duration)
		defer timer.Stop()
		timeout = timer.C
	}
	why := ""
	select {
	case s := <-sigs:
		why = "the proxy got " + s.String()
	case <-timeout:
		why = fmt.Sprintf("--duration %s ran out", f.duration)
	case err := <-served:
		why = "the proxy stopped serving: " + err.Error()
	}
	// The session's end cuts the streams still open, so that Shutdown
	// does not wait on an event stream that never ends.
	if err := proxy.Close(why); err != nil {
		fmt.Fprintf(stderr, "mcpchaos proxy: %v\n", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	if err := rec.finish(); err != nil {
		fmt.Fprintf(stderr, "mcpchaos proxy: %v\n", err)
		return exitUsage
	}
	if rec.judge == nil {
		return exitOK
	}
	return rec.report("proxy", &f.reports, stdout, reports.Target{URL: f.upstream}, name, f.seed, sc, repro, f.quiet, stderr)
}

// checkListen refuses an address other than loopback unless allowed: the
// proxy passes on whatever reaches it, tokens included.
func checkListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %v (write HOST:PORT, as in %s)", addr, err, defaultListen)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %s is not a loopback address; the proxy passes on what reaches it, tokens included, so add --allow-remote to listen there", addr)
}

// reachable dials the upstream once, so that a server that is not running
// is a clear message at the start rather than a 502 per request.
func reachable(u *url.URL) error {
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	c, err := net.DialTimeout("tcp", host, httpchaos.DefaultDialTimeout)
	if err != nil {
		return err
	}
	return c.Close()
}
