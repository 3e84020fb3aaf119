package proof

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
)

// conformanceCheck is one check of the MCP conformance suite, as compared
// between runs: what varies from run to run (timestamps, session and event
// ids, the details' dumps) is left out, and the server's address in a
// message is written HOST.
type conformanceCheck struct {
	Scenario, ID, Status, Error string
}

var loopbackAddr = regexp.MustCompile(`(127\.0\.0\.1|localhost|\[::1\]):\d+`)

// runConformance runs the pinned conformance suite in mode (server or
// client) with args, and returns its checks in order.
func runConformance(t *testing.T, dir, mode string, args ...string) []conformanceCheck {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := append([]string{filepath.Join(dir, "npm/node_modules/@modelcontextprotocol/conformance/dist/index.js"), mode}, args...)
	cmd := exec.CommandContext(ctx, "node", append(argv, "-o", out)...)
	// It exits 1 when a check fails, which the comparison is about.
	log, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish within 3 minutes:\n%s", log)
	}
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("the conformance suite: %v\n%s", err, log)
	}
	runs, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	// A result directory is SCENARIO-TIMESTAMP, after server- in server mode.
	name := regexp.MustCompile(`^(?:server-)?(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$`)
	var checks []conformanceCheck
	for _, r := range runs {
		m := name.FindStringSubmatch(r.Name())
		if m == nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(out, r.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var list []struct {
			ID, Status, ErrorMessage string
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatalf("%s/checks.json: %v", r.Name(), err)
		}
		for _, c := range list {
			if c.Status == "INFO" && mode == "client" {
				// A client scenario's INFO checks log each request and
				// response, with the URL and timing of the moment.
				continue
			}
			checks = append(checks, conformanceCheck{m[1], c.ID, c.Status, loopbackAddr.ReplaceAllString(c.ErrorMessage, "HOST")})
		}
	}
	if len(checks) == 0 {
		t.Fatalf("the conformance suite recorded no checks:\n%s", log)
	}
	// Scenarios in name order, each one's checks in the order it made them.
	slices.SortStableFunc(checks, func(a, b conformanceCheck) int { return strings.Compare(a.Scenario, b.Scenario) })
	return checks
}

// With no fault, the MCP conformance suite (@modelcontextprotocol/
// conformance, pinned in proof/corpus) gives the same results through the
// proxy as directly, check for check, against servers no one on this
// project wrote and against the bundled mcp-go server: the proxy changes
// nothing a server's conformance depends on. And the judge, reading the
// suite's traffic, finds nothing: a false alarm here would be ours.
func TestConformanceThroughTheProxy(t *testing.T) {
	dir := corpusDir(t)
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) *url.URL
		// passed is the fewest checks the suite passes directly, so that
		// a server that answered nothing cannot make the comparison pass.
		passed int
	}{
		{"python-sdk everything-server (mcp 2.3.0)", func(t *testing.T) *url.URL {
			return startServed(t, func(port int) []string {
				return []string{"env", "PYTHONPATH=" + filepath.Join(dir, "python-sdk/examples/servers/everything-server"),
					filepath.Join(dir, "py/bin/python"), "-m", "mcp_everything_server", "--port", fmt.Sprint(port)}
			})
		}, 40},
		{"server-everything 2026.8.31 (npm)", func(t *testing.T) *url.URL {
			return startServed(t, func(port int) []string {
				return []string{"env", fmt.Sprintf("PORT=%d", port), "node",
					filepath.Join(dir, "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"}
			})
		}, 10},
		{"mcp-go (the bundled example server, stateful)", func(t *testing.T) *url.URL {
			s := httptest.NewServer(server.NewStreamableHTTPServer(everything.New(), server.WithStateful(true)))
			t.Cleanup(s.Close)
			u, _ := url.Parse(s.URL + "/mcp")
			return u
		}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := tc.start(t)
			direct := runConformance(t, dir, "server", "--url", upstream.String(), "--suite", "all")
			var passed int
			for _, c := range direct {
				if c.Status == "SUCCESS" {
					passed++
				}
			}
			if passed < tc.passed {
				t.Fatalf("directly, the suite passed %d checks; want at least %d:\n%+v", passed, tc.passed, direct)
			}

			rec := chaos.NewMemoryRecorder()
			p, err := httpchaos.New(httpchaos.Config{Upstream: upstream, Plan: faults.NewPlan(1, nil), Recorder: rec})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			front := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
			go func() { _ = front.Serve(ln) }()
			proxied := runConformance(t, dir, "server", "--url", "http://"+ln.Addr().String()+upstream.Path, "--suite", "all")
			if err := p.Close("the conformance suite finished"); err != nil {
				t.Error(err)
			}
			front.Close()

			if diff := cmp.Diff(direct, proxied); diff != "" {
				t.Errorf("conformance checks, direct vs through the proxy (-direct +proxied):\n%s", diff)
			}
			t.Logf("%d checks, %d passed, the same through the proxy", len(direct), passed)
			v := judge.Session(rec.Events())
			for _, f := range v.Findings {
				t.Errorf("the judge, on the suite's traffic: %s %s: %s", f.Kind, f.Rule, f.Message)
			}
		})
	}
}

// startServed starts an HTTP server command on a free port and returns its
// MCP endpoint once it listens; it is stopped when the test ends.
func startServed(t *testing.T, command func(port int) []string) *url.URL {
	t.Helper()
	port := freePort(t)
	s, err := chaos.StartServed(chaos.ServedConfig{Command: command(port), Recorder: chaos.NewMemoryRecorder()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop("the test ended") })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if err := s.WaitListening(context.Background(), addr, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://" + addr + "/mcp")
	return u
}

// conformanceClientScenarios are the conformance suite's client scenarios
// that are not about authorization (the auth/ ones need an OAuth client).
var conformanceClientScenarios = []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"}

// The conformance suite's client mode gives the same checks for the
// TypeScript SDK's client (examples/typescript/conformance_client.mjs)
// run directly and run through `mcpchaos proxy` with no fault, as a user
// would put it there (proof/testdata/via-proxy.sh): the initialize
// handshake, tool calls, an elicitation the SDK fills with defaults, and
// sse-retry, where the scenario server closes the call's stream after an
// event with retry: 500 and the client must resume with a GET carrying
// Last-Event-ID after 500 ms (the proxy passes the retry field and the
// resumption on, within the suite's 50 ms/200 ms tolerance). The proxy's
// judge finds nothing wrong with the client; it finds one thing wrong
// with the initialize scenario's own server, which is so: it answers the
// client's notifications/initialized with {"jsonrpc":"2.0","result":{}},
// a response with no id to a message that must not be answered.
func TestConformanceClientThroughTheProxy(t *testing.T) {
	dir := corpusDir(t)
	root := repoRoot(t)
	node := typeScriptSDK(t, filepath.Join(root, "examples", "typescript"))
	client := node + " " + filepath.Join(root, "examples", "typescript", "conformance_client.mjs")
	bin := mcpchaosBinary(t)
	wrapper := filepath.Join(root, "proof", "testdata", "via-proxy.sh")
	wantFindings := map[string][]string{"initialize": {"protocol-violation: a frame that is not a JSON-RPC message: response has no \"id\" (1 frame from the server)"}}
	for _, scenario := range conformanceClientScenarios {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			direct := runConformance(t, dir, "client", "--command", client, "--scenario", scenario)
			for _, c := range direct {
				if c.Status != "SUCCESS" {
					t.Errorf("directly, the client fails a check: %+v", c)
				}
			}
			report := filepath.Join(t.TempDir(), "report.json")
			proxied := runConformance(t, dir, "client", "--command", wrapper+" "+bin+" "+report+" "+client, "--scenario", scenario)
			if diff := cmp.Diff(direct, proxied); diff != "" {
				t.Errorf("conformance checks, direct vs through the proxy (-direct +proxied):\n%s", diff)
			}
			var rep reports.Report
			readJSON(t, report, &rep)
			var got []string
			for _, f := range rep.Findings {
				got = append(got, string(f.Kind)+": "+f.Message)
			}
			if diff := cmp.Diff(wantFindings[scenario], got); diff != "" {
				t.Errorf("the proxy's judge on the session (-want +got):\n%s", diff)
			}
			t.Logf("%d checks, the same through the proxy", len(direct))
		})
	}
}
