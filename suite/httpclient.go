package suite

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/wire"
)

// ServerURLEnv hands the client program the URL of the MCP endpoint it must
// connect to, over HTTP: the proxy's, in front of the real server.
const ServerURLEnv = "MCPCHAOS_SERVER_URL"

// runHTTPClientScenario runs the client program once against the server at
// ServerURL through a fresh proxy on a loopback port, the proxy recording
// the session for the judge as the relay does on stdio. With a server
// command, the server is started first and stopped after.
func (o ClientOptions) runHTTPClientScenario(ctx context.Context, sc faults.Scenario) (*scenarioRun, error) {
	parsed, err := sc.Parse()
	if err != nil {
		return nil, err
	}
	seed := seedFor(sc, o.Seed)
	deadline := deadlineFor(sc, o.Deadline)
	if sc.Expect == "" {
		sc.Expect = "success" // a scenario file may leave it out: every call stays answerable
	}
	repro := ""
	if o.Repro != nil {
		repro = o.Repro(sc.Selector(), seed)
	}
	log, err := newSessionLog(o.TranscriptDir, sc.Name)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	connected, err := o.driveHTTPClient(ctx, sc, faults.NewPlan(seed, parsed), log, deadline, repro)
	if err != nil {
		_, _ = log.finish()
		return nil, err
	}
	verdict, err := log.finish()
	if err != nil {
		return nil, err
	}
	if sc.Name == faults.Baseline.Name && !connected {
		return nil, &SetupError{Reason: "the client never connected to the URL in $" + ServerURLEnv, Stderr: log.clientStderr.list()}
	}
	if o.observe != nil {
		o.observe(sc.Name, log.decisions.out)
	}
	run := clientVerdict(sc, seed, repro, verdict, time.Since(start))
	run.stderr = log.clientStderr.list()
	run.result.Transcript = log.path
	return run, nil
}

// driveHTTPClient runs one session: the server (when started here), the
// proxy, and the client program; connected says the client reached the
// proxy.
func (o ClientOptions) driveHTTPClient(ctx context.Context, sc faults.Scenario, plan *faults.Plan, log *sessionLog, deadline time.Duration, repro string) (connected bool, err error) {
	px, err := httpchaos.New(httpchaos.Config{
		Upstream: o.ServerURL, Plan: plan, Recorder: log.rec,
		Tool: "mcpchaos " + o.Version, Scenario: sc.Name, Role: "client", Repro: repro, Expect: sc.Expect,
		Deadline: deadline, Grace: o.Grace,
	})
	if err != nil {
		return false, err
	}
	var served *chaos.Served
	if len(o.Server) > 0 {
		served, err = chaos.StartServed(chaos.ServedConfig{Command: o.Server, Recorder: log.rec, Grace: o.Grace})
		if err != nil {
			px.Close("the server could not be started")
			return false, err
		}
		if err := served.WaitListening(ctx, hostPort(o.ServerURL), o.startTimeout()); err != nil {
			served.Stop("it never listened")
			px.Close("the server never listened")
			return false, &SetupError{Reason: "the HTTP server did not start", Err: err, Stderr: log.stderr.list(), Whose: "server"}
		}
	}
	stop := func(why string) {
		if served != nil {
			served.Stop(why)
		}
		px.Close(why)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		stop("the proxy could not listen")
		return false, fmt.Errorf("the proxy cannot listen on a loopback port: %w", err)
	}
	srv := &http.Server{Handler: px, ReadHeaderTimeout: 10 * time.Second}
	proxyDone := make(chan struct{})
	go func() {
		defer close(proxyDone)
		_ = srv.Serve(ln)
	}()
	front := *o.ServerURL
	front.Scheme, front.Host, front.User = "http", ln.Addr().String(), nil

	record := func(e wire.Event) {
		e.Peer = "client"
		log.rec.Record(e)
	}
	env := append(withoutEnv(os.Environ(), ServerCommandEnv), ServerURLEnv+"="+front.String())
	proc, err := startClient(o.Client, env, record)
	if err == nil {
		proc.await(ctx, deadline, o.Grace, nil)
		proc.finish()
	}
	connected = px.Exchanges() > 0
	// The server is stopped while the proxy still records, so that its
	// exit is in the session; then the proxy ends it.
	stop("the client program ended")
	srv.Close()
	<-proxyDone
	return connected, err
}

func (o ClientOptions) startTimeout() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return DefaultStartTimeout
}

// withoutEnv is env without the variable name: a client run over HTTP must
// not find a stdio server command left in the environment it inherited.
func withoutEnv(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
