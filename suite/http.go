package suite

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/httpconn"
	"github.com/mcpchaos/mcpchaos/internal/ctxsleep"
	"github.com/mcpchaos/mcpchaos/internal/portowner"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/wire"
)

// driveHTTP runs the probe against an HTTP server through a fresh proxy on
// a loopback port: the same plan, recorder and judge as on stdio, with the
// proxy in the relay's place. With a command, the server is started first
// and stopped after (SIGTERM, then SIGKILL), its stderr recorded for the
// judge; without, the server at the URL serves every scenario.
func (o Options) driveHTTP(ctx context.Context, st setup) (driven, error) {
	pr, err := startProxied(ctx, httpchaos.Config{
		Upstream: o.URL, URLTemplate: o.urlTemplate(), Plan: st.plan, Recorder: st.log.rec,
		Tool: o.Tool, Scenario: st.sc.Name, Role: "server", Repro: st.repro,
		Deadline: st.deadline, MaxDeadline: st.maxDeadline, Grace: o.Grace,
	}, o.server(), o.startTimeout(), st.log)
	if err != nil {
		return driven{}, err
	}
	pipe, err := httpconn.Dial(httpconn.Config{URL: &pr.front, Header: o.Header})
	if err != nil {
		pr.stop("the probe could not dial the proxy")
		return driven{}, err
	}
	var probes sync.WaitGroup
	pc := st.probe
	pc.Overdue = func(id, method string) {
		// Overdue must not block: the probe waits for its answer.
		probes.Add(1)
		go func() {
			defer probes.Done()
			pr.px.Probe(fmt.Sprintf("request %s (%s) unanswered after %s", id, method, st.deadline))
		}()
	}
	probeCtx, cancelProbe := context.WithCancelCause(ctx)
	watched := pr.endProbeIfServerDies(probeCtx, cancelProbe)
	var d driven
	d.outcome, d.probeErr = probe.Run(probeCtx, pc, pipe.Reader(), pipe.Writer())
	d.refused = pipe.Refused()
	if context.Cause(probeCtx) == errServerGone && d.outcome != nil && d.outcome.Initialized {
		// As on stdio, a server that dies mid-session is the judge's to
		// judge (a crash, the answers it lost), not a failed set-up.
		d.probeErr = nil
	}
	cancelProbe(nil)
	<-watched
	// The probe has closed its connections; the server is stopped once the
	// proxy has closed its own to the server, as it would be once its
	// clients are gone.
	pr.px.WaitIdle(clientGoneWait)
	pr.stop("the probe client ended its session")
	probes.Wait()
	return d, nil
}

// clientGoneWait bounds the wait for the proxy to pass the probe's closed
// connections on to the server.
const clientGoneWait = time.Second

// errServerGone ends the probe of a server that exited on its own.
var errServerGone = errors.New("the server exited")

// serverGoneGrace is how long the probe goes on after the server it
// started exits: enough for what the death cut short to be recorded.
const serverGoneGrace = 500 * time.Millisecond

// endProbeIfServerDies cancels the probe, with errServerGone, shortly after
// the server started here exits: nothing answers a dead server, and the
// probe waiting out the deadline of every call it had in flight (7 s a
// scenario) told the judge nothing more. The returned channel closes once
// the watch has ended, which ctx ending makes it do.
func (pr *proxied) endProbeIfServerDies(ctx context.Context, cancel context.CancelCauseFunc) <-chan struct{} {
	done := make(chan struct{})
	if pr.served == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		select {
		case <-pr.served.Done():
		case <-ctx.Done():
			return
		}
		if ctxsleep.Sleep(ctx, serverGoneGrace) {
			cancel(errServerGone)
		}
	}()
	return done
}

// proxied is an HTTP server behind a fresh proxy session on a loopback
// port: the server started from a command when one is given (else the one
// at the upstream URL serves), the proxy serving, and front, the proxy's
// MCP endpoint (the upstream's path and query).
type proxied struct {
	px     *httpchaos.Proxy
	served *chaos.Served
	srv    *http.Server
	done   chan struct{}
	front  url.URL
}

// startProxied starts the server (with a command: it must listen on the
// upstream's port within startTimeout) and the proxy in front of it.
func startProxied(ctx context.Context, cfg httpchaos.Config, command serverCommand, startTimeout time.Duration, log *sessionLog) (*proxied, error) {
	var sig *servedSignaller
	if len(command.argv) > 0 {
		sig = &servedSignaller{}
		cfg.Signaller = sig
	}
	px, err := httpchaos.New(cfg)
	if err != nil {
		return nil, err
	}
	pr := &proxied{px: px, done: make(chan struct{})}
	if len(command.argv) > 0 {
		pr.served, err = startServed(ctx, command, cfg, log.rec, startTimeout, log.stderr.list)
		if err != nil {
			px.Close("the server could not be started")
			return nil, err
		}
		sig.served = pr.served
	}
	if err := pr.listen(cfg.Upstream); err != nil {
		pr.stopServer("the proxy could not listen")
		return nil, err
	}
	return pr, nil
}

// servedSignaller is the Signaller of a server the run starts: the proxy
// is made first (its session event opens the record), the server after,
// before any traffic can fire a fault.
type servedSignaller struct{ served *chaos.Served }

func (s *servedSignaller) CanSignal(name string) string {
	if s.served == nil {
		return "the server has not started"
	}
	return s.served.CanSignal(name)
}

func (s *servedSignaller) Signal(name, label string) { s.served.Signal(name, label) }

// startServed starts an HTTP server from its command, its events recorded
// by rec, and waits for it to listen on the upstream's port.
func startServed(ctx context.Context, command serverCommand, cfg httpchaos.Config, rec chaos.Recorder, startTimeout time.Duration, stderr func() []string) (*chaos.Served, error) {
	served, err := chaos.StartServed(chaos.ServedConfig{Command: command.argv, Env: command.env, Recorder: rec, Grace: cfg.Grace})
	if err != nil {
		return nil, err
	}
	if err := served.WaitListening(ctx, hostPort(cfg.Upstream), startTimeout); err != nil {
		served.Stop("it never listened")
		return nil, &SetupError{Reason: "the HTTP server did not start", Err: err, Stderr: stderr(), Whose: "server"}
	}
	if other, ok := portHeldBefore(cfg.Upstream, served.PID()); ok {
		served.Stop("another process holds its port")
		return nil, &SetupError{Reason: "the HTTP server's port is not its own", Stderr: stderr(), Whose: "server", portTaken: true,
			Err: fmt.Errorf("port %s answers, but %s holds it, which ran before mcpchaos started the server; the run would test that process instead: stop it, or give the URL and the server's command another port", portOf(cfg.Upstream), other)}
	}
	if port, err := strconv.Atoi(portOf(cfg.Upstream)); err == nil {
		if addrs := portowner.Addresses(port); len(addrs) > 0 {
			rec.Record(wire.Event{Type: wire.EventListening, Detail: strings.Join(addrs, ", ")})
		}
	}
	return served, nil
}

// portHeldBefore returns the process listening on u's port when it is not
// the server started as pid nor one of its children, and ran before it:
// the server could not bind, and something else answers. A listener
// started after the server outside its tree (a daemon it forked, a
// container's port forwarder) is the server's own doing. Where the system
// does not tell, nothing is found.
func portHeldBefore(u *url.URL, pid int) (portowner.Process, bool) {
	port, err := strconv.Atoi(portOf(u))
	if err != nil {
		return portowner.Process{}, false
	}
	owner, ok := portowner.Listener(port)
	if !ok || portowner.Descends(owner.PID, pid) || !portowner.StartedBefore(owner.PID, pid) {
		return portowner.Process{}, false
	}
	return owner, true
}

// CheckPortFree tells, before mcpchaos starts the server from its command,
// that nothing listens on the URL's port yet: the server could not bind
// it, and the run would test whatever answers there.
func CheckPortFree(ctx context.Context, u *url.URL) error {
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", hostPort(u))
	if err != nil {
		return nil
	}
	conn.Close()
	who := "another process"
	if port, err := strconv.Atoi(portOf(u)); err == nil {
		if owner, ok := portowner.Listener(port); ok {
			who = owner.String()
		}
	}
	return fmt.Errorf("port %s of %s is already in use by %s: mcpchaos starts the server with its command and would test that process instead; stop it, or give the URL and the server's command another port", portOf(u), u.Redacted(), who)
}

// portOf is the port u names, or its scheme's.
func portOf(u *url.URL) string {
	_, port, _ := net.SplitHostPort(hostPort(u))
	return port
}

// listen serves the proxy on a loopback port; front is then its endpoint.
func (pr *proxied) listen(upstream *url.URL) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("the proxy cannot listen on a loopback port: %w", err)
	}
	pr.srv = &http.Server{Handler: pr.px, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(pr.done)
		_ = pr.srv.Serve(ln)
	}()
	pr.front = *upstream
	pr.front.Scheme, pr.front.Host, pr.front.User = "http", ln.Addr().String(), nil
	return nil
}

// stopServer stops the server, when started here, while the proxy still
// records, so its exit and last words are in the session; then the proxy
// ends the session.
func (pr *proxied) stopServer(why string) {
	if pr.served != nil {
		pr.px.HangUpIdle()
		pr.served.Stop(why)
	}
	pr.px.Close(why)
}

// stop ends it all: the server, the proxy session, the listener.
func (pr *proxied) stop(why string) {
	pr.stopServer(why)
	pr.srv.Close()
	<-pr.done
}

func (o Options) startTimeout() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return DefaultStartTimeout
}

// hostPort is the address u names, with the scheme's port when it names
// none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// CheckReachable tells, before any scenario runs, whether something
// listens at u: an HTTP server the run does not start must already be up.
func CheckReachable(ctx context.Context, u *url.URL) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", hostPort(u))
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return fmt.Errorf("nothing answers at %s (%v): start the server first, or give its command after --", u.Redacted(), err)
	}
	return conn.Close()
}

// onePort says how many scenarios go at once when each starts the HTTP
// server from a command: they would all start it on one port, so one at a
// time, and asking for more is refused.
func onePort(command []string, parallel int) (int, error) {
	if len(command) == 0 {
		return parallel, nil
	}
	if parallel > 1 {
		return 0, fmt.Errorf("%d scenarios at once: each starts the server %s on the port of its URL, so they run one at a time (run them one at a time, or start the server yourself and give only its URL)", parallel, ShellQuote(command))
	}
	return 1, nil
}

// checkHTTPScenarios refuses a scenario with a fault that has no meaning
// over HTTP, before anything runs.
func checkHTTPScenarios(scs []faults.Scenario) error {
	for _, sc := range scs {
		parsed, err := sc.Parse()
		if err != nil {
			return err
		}
		if err := httpchaos.CheckPlan(faults.NewPlan(0, parsed)); err != nil {
			return fmt.Errorf("%s: %w", named(sc), err)
		}
	}
	return nil
}

// checkStdioScenarios refuses a scenario with a fault that exists only on
// HTTP, and one of several sessions, before anything runs.
func checkStdioScenarios(scs []faults.Scenario) error {
	for _, sc := range scs {
		if sc.Sessions() > 1 {
			return fmt.Errorf("%s: workload: sessions: %d runs several clients against one server, which only an HTTP server has; a stdio server serves the one client that started it (run it with --url, or remove sessions:)", named(sc), sc.Sessions())
		}
		parsed, err := sc.Parse()
		if err != nil {
			return err
		}
		if err := chaos.CheckPlan(faults.NewPlan(0, parsed)); err != nil {
			return fmt.Errorf("%s: %w", named(sc), err)
		}
	}
	return nil
}
