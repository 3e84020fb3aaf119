package suite

import (
	"context"
	"os"
	"strings"
	"time"

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
	run.save = o.caseSaver(sc, seed, deadline, o.hangAfterFor(sc, deadline), log.decisions.out)
	return run, nil
}

// driveHTTPClient runs one session: the server (when started here), the
// proxy, and the client program; connected says the client reached the
// proxy.
func (o ClientOptions) driveHTTPClient(ctx context.Context, sc faults.Scenario, plan *faults.Plan, log *sessionLog, deadline time.Duration, repro string) (connected bool, err error) {
	pr, err := startProxied(ctx, httpchaos.Config{
		Upstream: o.ServerURL, Plan: plan, Recorder: log.rec,
		Tool: "mcpchaos " + o.Version, Scenario: sc.Name, Role: "client", Repro: repro, Expect: sc.Expect,
		Deadline: deadline, HangAfter: o.hangAfterFor(sc, deadline), Grace: o.Grace,
	}, o.Server, o.startTimeout(), log)
	if err != nil {
		return false, err
	}
	record := func(e wire.Event) {
		e.Peer = "client"
		log.rec.Record(e)
	}
	env := append(withoutEnv(os.Environ(), ServerCommandEnv), ServerURLEnv+"="+pr.front.String())
	proc, err := startClient(o.Client, env, record)
	if err == nil {
		proc.await(ctx, deadline, o.hangAfterFor(sc, deadline), o.Grace, func() {
			// Past its deadline: whether the client still answers a ping
			// tells a stuck receive loop from one that waits for the
			// server. The proxy's session bounds the probe's write.
			go pr.px.ProbeClient("the client program is past its deadline")
		})
		proc.finish()
	}
	connected = pr.px.Exchanges() > 0
	pr.stop("the client program ended")
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
