package suite

import (
	"context"
	"fmt"
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
	drove, err := o.driveHTTPClient(ctx, sc, faults.NewPlan(seed, parsed), log, deadline, repro)
	if err != nil {
		_, _ = log.finish()
		return nil, err
	}
	verdict, err := log.finish()
	if err != nil {
		return nil, err
	}
	if sc.Name == faults.Baseline.Name {
		if err := notAClient(drove, log); err != nil {
			return nil, err
		}
	}
	if o.observe != nil {
		o.observe(sc.Name, log.decisions.out)
	}
	run := clientVerdict(sc, seed, repro, verdict, time.Since(start))
	run.opened = log.served.answered
	run.stderr = log.clientStderr.list()
	run.result.Transcript = log.path
	run.save = o.caseSaver(sc, seed, deadline, o.hangAfterFor(sc, deadline), log.decisions.out)
	return run, nil
}

// notAClient is the set-up error for a baseline in which the client
// program did not act as an MCP client: it never reached the URL it was
// given, or reached it but never opened an MCP session.
func notAClient(d drive, log *sessionLog) error {
	switch {
	case !d.connected:
		return &SetupError{Reason: fmt.Sprintf("the client never connected to the URL in $%s: it %s (does it read the variable?)", ServerURLEnv, d.ended),
			Stderr: log.clientStderr.list()}
	case !log.opened.Load():
		first := log.first
		if first == "" {
			first = "nothing the proxy could frame"
		}
		return &SetupError{Reason: fmt.Sprintf("the client reached the URL in $%s but opened no MCP session: it sent no initialize (nor server/discover) request, its first was %s, and it %s; is it an MCP client?", ServerURLEnv, first, d.ended),
			Stderr: log.clientStderr.list()}
	}
	return nil
}

// drive is what became of the client program in one session: whether it
// reached the proxy, and how it ended.
type drive struct {
	connected bool
	ended     string
}

// driveHTTPClient runs one session: the server (when started here), the
// proxy, and the client program.
func (o ClientOptions) driveHTTPClient(ctx context.Context, sc faults.Scenario, plan *faults.Plan, log *sessionLog, deadline time.Duration, repro string) (d drive, err error) {
	pr, err := startProxied(ctx, httpchaos.Config{
		Upstream: o.ServerURL, URLTemplate: o.urlTemplate(), Plan: plan, Recorder: log.rec,
		Tool: "mcpchaos " + o.Version, Scenario: sc.Name, Role: "client", Repro: repro, Expect: sc.Expect,
		Deadline: deadline, HangAfter: o.hangAfterFor(sc, deadline), Grace: o.Grace,
	}, o.server(), o.startTimeout(), log)
	if err != nil {
		return d, err
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
		}, func() bool { return !log.opened.Load() })
		proc.finish()
		d.ended = proc.endWords()
	}
	d.connected = pr.px.Exchanges() > 0
	pr.stop("the client program ended")
	return d, err
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
