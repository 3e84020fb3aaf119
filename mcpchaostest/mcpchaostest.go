package mcpchaostest

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/shell"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// Config says which server to test and how. Exactly one of Command, Server
// and URL is set.
type Config struct {
	// Command is a stdio server: its argv, started fresh for every scenario.
	Command []string
	// Server is an mcp-go server in this process, served on streamable HTTP
	// at a loopback port for the run (every scenario reaches the same one).
	Server *server.MCPServer
	// HTTPOptions configure the streamable HTTP server Server is served
	// with: give the ones the server runs with in production
	// (server.WithStateful(true), ...), since they change what it does.
	HTTPOptions []server.StreamableHTTPOption
	// URL is the MCP endpoint of an HTTP server already running.
	URL string
	// Scenarios names built-in scenarios (see mcpchaos scenarios) or
	// scenario files; none runs the transport's default matrix.
	Scenarios []string
	// Seed is the seed of every random decision; zero is 1, so that a
	// failing test fails the same way again.
	Seed uint64
	// Deadline is how long a request may go unanswered before it is a hang
	// (default 5s).
	Deadline time.Duration
	// Timeout bounds the whole run (default 10 minutes).
	Timeout time.Duration
}

// T is what Run needs of a test: *testing.T and *testing.B have it.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// Run runs the server through the scenarios and fails t with one error per
// error finding (its message, evidence summary and repro line); warnings
// are logged. A server that cannot be tested (it does not start, or fails
// its handshake) fails t at once. It returns the report (nil on a set-up
// failure).
func Run(t T, c Config) *reports.Report {
	t.Helper()
	r, err := Check(c)
	if err != nil {
		t.Fatalf("mcpchaostest: %v", err)
		return nil
	}
	for _, f := range r.Findings {
		what := f.Kind
		if f.Signature != "" {
			what += " " + f.Signature
		}
		text := fmt.Sprintf("%s in scenario %s: %s\n  repro: %s", what, f.Scenario, f.Message, f.Repro)
		if f.Severity == reports.SeverityWarning || f.Expected {
			t.Logf("mcpchaostest: warning: %s", text)
			continue
		}
		t.Errorf("mcpchaostest: %s", text)
	}
	return r
}

// Check is Run without a test: it returns the report, or an error when the
// server cannot be tested or the configuration is wrong.
func Check(c Config) (*reports.Report, error) {
	set := 0
	for _, ok := range []bool{len(c.Command) > 0, c.Server != nil, c.URL != ""} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return nil, errors.New("set exactly one of Config.Command, Config.Server and Config.URL")
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Minute
	}
	o := suite.Options{Command: c.Command, Seed: c.Seed, Deadline: c.Deadline, Tool: "mcpchaostest", Version: "mcpchaostest"}
	matrix, command := faults.ServerScenarios(), faults.ForServer
	if c.Server != nil {
		h := server.NewStreamableHTTPServer(c.Server, c.HTTPOptions...)
		front := httptest.NewServer(h)
		defer front.Close()
		// First (deferred last): the server's sessions end, and with them
		// its open GET streams, which Close would wait for, and its
		// session sweeper, which nothing else stops.
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = h.Shutdown(ctx)
		}()
		c.URL = front.URL + "/mcp"
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("Config.URL %q is not an http:// or https:// MCP endpoint", c.URL)
		}
		o.URL = u
		matrix, command = faults.HTTPServerScenariosFor(u, false), faults.ForHTTPServer // a Config sends no credentials
		if c.Server != nil {
			// The HTTP front is this package's, not the one the server is
			// deployed behind: what it lets a foreign page do says nothing
			// of the user's.
			matrix = slices.DeleteFunc(matrix, faults.LocalOnly)
		}
	}
	o.Scenarios = matrix
	if len(c.Scenarios) > 0 {
		scs, err := faults.ResolveScenarios(c.Scenarios, append(faults.PresetsFor(command), faults.Baseline))
		if err != nil {
			return nil, err
		}
		o.Scenarios = scs
	}
	o.Repro = func(scenario string, seed uint64) string {
		argv := []string{"mcpchaos", "test", "--scenario", scenario, "--seed", fmt.Sprint(seed)}
		switch {
		case c.Server != nil:
			// An in-process server has no command line: the test is
			// the replay, with this scenario and seed.
			return fmt.Sprintf("mcpchaostest.Config{Server: ..., Scenarios: []string{%q}, Seed: %d}", scenario, seed)
		case c.URL != "":
			argv = append(argv, "--url", c.URL)
		default:
			argv = append(append(argv, "--"), c.Command...)
		}
		return shell.Quote(argv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	return suite.Run(ctx, o)
}
