package proof

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// The corpus (issue 9): servers no one on this project wrote, installed at
// pinned versions by scripts/install-corpus, each run through the default
// matrix with the verdicts pinned. Every verdict below was read against the
// MCP specification (2025-11-25) by hand, and docs/corpus.md explains each
// one; a verdict that changes fails the test, so a change of the judge that
// turns a fair server's run into a finding (a false alarm) is caught here.

// verdict is what one scenario came to: its outcome and the rules its own
// findings cite (sorted; the baseline's findings are not repeated).
type verdict struct {
	Outcome string
	Rules   []string
}

func pass(rules ...string) verdict  { return verdict{reports.OutcomePass, rules} }
func fail(rules ...string) verdict  { return verdict{reports.OutcomeFail, rules} }
func indet(rules ...string) verdict { return verdict{reports.OutcomeIndeterminate, rules} }

type corpusServer struct {
	name string
	// command is the server's command line, given the corpus directory
	// and a scratch directory of the test's.
	command func(corpus, scratch string) []string
	want    map[string]verdict
	// alt are other verdicts a scenario may come to, where the server's own
	// timing decides (docs/corpus.md says why for each).
	alt map[string][]verdict
	// deadline is --deadline for a server with a tool slower than the
	// default on a loaded machine, and not stuck (0: the default).
	deadline time.Duration
	// skipTools are --skip-tool: tools whose answer time is the network's,
	// not the server's.
	skipTools []string
}

const (
	lostAtShutdown = reports.RuleLostAtShutdown
	sigterm        = reports.RuleShutdownSIGTERM
	notMCP         = reports.RuleNotMCP
	crashHC        = reports.RuleCrashAfterHalfClose
)

// noMoment is eof-server-request against a server that never asks the
// client anything: the moment never comes.
var noMoment = indet()

func allPass(overrides map[string]verdict) map[string]verdict {
	m := map[string]verdict{"baseline": pass()}
	for _, s := range faults.ServerScenarios() {
		m[s.Name] = pass()
	}
	m["eof-server-request"] = noMoment
	// eof-surface waits for a prompt and a resource read in flight
	// together, eof-task for a task being polled: most servers of the
	// corpus have neither (issue 29).
	m["eof-surface"] = noMoment
	m["eof-task"] = noMoment
	for k, v := range overrides {
		m[k] = v
	}
	return m
}

// diesOfEPIPE is allPass for a server that dies of the exception its failed
// write raised after half-close-s2c: the TypeScript SDK's stdio server of an
// unhandled 'error' event (typescript-sdk #1564), the Python SDK's (mcp
// 2.3.0) of BrokenPipeError escaping stdio_server()'s task group. The fault
// made the write fail, so the crash is a warning and the scenario passes.
func diesOfEPIPE(overrides map[string]verdict) map[string]verdict {
	m := allPass(overrides)
	if _, ok := overrides["half-close-s2c"]; !ok {
		m["half-close-s2c"] = pass(crashHC)
	}
	return m
}

// pyAlt adds to alt what half-close-s2c may also come to on a server of the
// Python SDK (mcp 2.3.0): the probe closes the server's stdin as soon as its
// output is gone, and the SDK cancels the calls still running at that EOF.
// When no answer was written between the half-close and the EOF, nothing
// failed: the server exits 0, and the scenario passes clean (mcp-server-time
// once in four runs, simple-tool once under the corpus test's load).
func pyAlt(alt map[string][]verdict) map[string][]verdict {
	if alt == nil {
		alt = map[string][]verdict{}
	}
	alt["half-close-s2c"] = append(alt["half-close-s2c"], pass())
	return alt
}

func npmServer(name string, args ...string) func(corpus, scratch string) []string {
	return func(corpus, _ string) []string {
		return append([]string{"node", filepath.Join(corpus, "npm/node_modules/@modelcontextprotocol", name, "dist/index.js")}, args...)
	}
}

// pyServer runs a server the corpus's Python environment installed as a
// command.
func pyServer(name string) func(corpus, scratch string) []string {
	return func(corpus, _ string) []string { return []string{filepath.Join(corpus, "py/bin", name)} }
}

// pySnippet runs one of the Python SDK's snippet servers: a module that
// builds `mcp` and leaves running it to the reader's mcp.run().
func pySnippet(name string) func(corpus, scratch string) []string {
	return func(corpus, _ string) []string {
		return []string{filepath.Join(corpus, "py/bin/python"), "-c", `import runpy, sys; runpy.run_path(sys.argv[1])["mcp"].run()`,
			filepath.Join(corpus, "python-sdk/examples/snippets/servers", name)}
	}
}

func tsExample(name string) func(corpus, scratch string) []string {
	return func(corpus, _ string) []string {
		return []string{"node", tsServerExample(corpus, name)}
	}
}

var corpus = []corpusServer{
	{
		name:    "server-everything",
		command: npmServer("server-everything", "stdio"),
		// toggle-simulated-logging and toggle-subscriber-updates start
		// intervals that keep Node alive after stdin closes.
		want: diesOfEPIPE(map[string]verdict{"baseline": pass(sigterm), "eof-server-request": pass(),
			// Its prompt and resource handlers, and its research task,
			// outlive the transport's end cleanly.
			"eof-surface": pass(), "eof-task": pass()}),
	},
	{
		name: "server-memory",
		command: func(corpus, scratch string) []string {
			return append([]string{"env", "MEMORY_FILE_PATH=" + filepath.Join(scratch, "memory.jsonl")}, npmServer("server-memory")(corpus, scratch)...)
		},
		want: diesOfEPIPE(nil),
	},
	{
		name: "server-filesystem",
		command: func(corpus, scratch string) []string {
			return npmServer("server-filesystem", scratch)(corpus, scratch)
		},
		// It asks for roots on initialized; the stdin closing then leaves
		// the request pending, whose timeout keeps Node alive.
		want: diesOfEPIPE(map[string]verdict{"eof-server-request": pass(sigterm)}),
	},
	{
		name:    "server-sequential-thinking",
		command: npmServer("server-sequential-thinking"),
		want:    diesOfEPIPE(nil),
	},
	{
		name:    "mcp-server-time",
		command: pyServer("mcp-server-time"),
		want:    diesOfEPIPE(map[string]verdict{"eof-inflight": pass(lostAtShutdown)}),
		alt:     pyAlt(map[string][]verdict{"eof-inflight": {pass()}}),
	},
	{
		name: "mcp-server-git",
		command: func(corpus, scratch string) []string {
			return []string{filepath.Join(corpus, "py/bin/mcp-server-git"), "--repository", filepath.Join(scratch, "repo")}
		},
		want: diesOfEPIPE(map[string]verdict{"eof-inflight": pass(lostAtShutdown)}),
		alt:  pyAlt(map[string][]verdict{"eof-inflight": {pass()}}),
	},
	{
		// Its fetch tool cannot reach robots.txt (no network here, and the
		// probe's URL has no host): a tool error, which is an answer.
		name:    "mcp-server-fetch",
		command: pyServer("mcp-server-fetch"),
		want:    diesOfEPIPE(map[string]verdict{"eof-inflight": pass(lostAtShutdown)}),
		alt:     pyAlt(map[string][]verdict{"eof-inflight": {pass()}}),
	},
	{
		name: "fastmcp 4 server",
		command: func(corpus, _ string) []string {
			return []string{filepath.Join(corpus, "py/bin/python"), filepath.Join(corpus, "..", "proof", "corpus", "fastmcp_server.py")}
		},
		want: diesOfEPIPE(map[string]verdict{"eof-inflight": pass(lostAtShutdown), "eof-surface": pass()}),
		// The reads and prompts in flight at the EOF are answered, or
		// cancelled unanswered, as the SDK's own timing decides.
		alt: pyAlt(map[string][]verdict{"eof-inflight": {pass()}, "eof-surface": {pass(lostAtShutdown)}}),
	},
	{
		name: "python-sdk simple-tool",
		command: func(corpus, _ string) []string {
			return []string{"env", "PYTHONPATH=" + filepath.Join(corpus, "python-sdk/examples/servers/simple-tool"),
				filepath.Join(corpus, "py/bin/python"), "-m", "mcp_simple_tool"}
		},
		want: diesOfEPIPE(map[string]verdict{"eof-inflight": pass(lostAtShutdown)}),
		alt:  pyAlt(map[string][]verdict{"eof-inflight": {pass()}}),
	},
	{
		name:    "python-sdk tool_progress",
		command: pySnippet("tool_progress.py"),
		want:    diesOfEPIPE(nil),
		alt:     pyAlt(map[string][]verdict{"eof-inflight": {pass(lostAtShutdown)}}),
	},
	{
		name:    "python-sdk sampling",
		command: pySnippet("sampling.py"),
		want:    diesOfEPIPE(map[string]verdict{"eof-inflight": pass(lostAtShutdown), "eof-server-request": pass(lostAtShutdown)}),
		alt:     pyAlt(map[string][]verdict{"eof-inflight": {pass()}}),
	},
	{
		name:    "typescript-sdk progressExample",
		command: tsExample("progressExample.js"),
		want:    diesOfEPIPE(nil),
	},
	{
		name:    "typescript-sdk mcpServerOutputSchema",
		command: tsExample("mcpServerOutputSchema.js"),
		want:    diesOfEPIPE(nil),
	},
	{
		name:    "typescript-sdk toolWithSampleServer",
		command: tsExample("toolWithSampleServer.js"),
		// console.log('MCP server is running...') on stdout, and a pending
		// sampling request that keeps Node alive once stdin closes.
		want: diesOfEPIPE(map[string]verdict{"baseline": fail(notMCP), "eof-inflight": pass(sigterm), "eof-server-request": pass(sigterm)}),
	},
	{
		name:    "go-sdk everything",
		command: func(corpus, _ string) []string { return []string{filepath.Join(corpus, "go-sdk/bin/everything")} },
		want: allPass(map[string]verdict{"eof-inflight": pass(lostAtShutdown), "eof-server-request": pass(lostAtShutdown),
			"eof-surface": pass(lostAtShutdown),
			// Stateful, the scenario runs the example's elicit (form)
			// tool, which panics on the probe's declined elicitation
			// (interface conversion: interface {} is nil, not string),
			// as TestGoSDKExampleCrashesOnADeclinedElicitation shows over
			// HTTP; the example runs no task, so the fault never fires.
			"eof-task": fail(reports.RuleCrashSignature, reports.RuleLostResponse)}),
		alt: map[string][]verdict{"eof-inflight": {pass()}, "eof-surface": {pass()}},
	},
	{
		name:    "mcp-go everything",
		command: func(corpus, _ string) []string { return []string{filepath.Join(corpus, "mcp-go/bin/everything")} },
		want:    allPass(map[string]verdict{"eof-surface": pass()}),
		alt:     map[string][]verdict{"eof-surface": {pass(lostAtShutdown)}},
	},
	{
		name:    "mcp-go sampling_server",
		command: func(corpus, _ string) []string { return []string{filepath.Join(corpus, "mcp-go/bin/sampling_server")} },
		want:    allPass(map[string]verdict{"eof-server-request": pass()}),
	},
	// Servers of the MCP registry, by their makers. Each tool calls the
	// service's API, which fails here (a made-up key, and no network): a
	// tool error, which is an answer.
	{
		name:    "brave-search-mcp-server",
		command: registryServer("@brave/brave-search-mcp-server/dist/index.js", "BRAVE_API_KEY=mcpchaos-no-key"),
		want:    diesOfEPIPE(nil),
		// brave_summarizer polls Brave's API 20 times, 50 ms apart: a
		// second here, where each fetch fails in 45 to 65 ms, but each
		// fetch waits on the machine's resolver, and on CI runners where
		// an unknown name times out instead of failing, 20 of them took
		// past 20 s (seen once, judged a hang). How long it takes is the
		// network's doing, not the server's: left out, as a user whose
		// tool waits on a slow API would (the judge's advice says so).
		skipTools: []string{"brave_summarizer"},
		// Its other tools make one fetch each, which also waits on the
		// resolver.
		deadline: 20 * time.Second,
		// Under eof-inflight it exits 0.7 to 0.8 s after its stdin
		// closes on a quiet machine, its call in flight (a fetch to
		// Brave's API, which fails here) ended. In one CI run, with the
		// proof's other servers running beside it, it was still alive
		// at the 3 s grace and SIGTERM ended it: the warning is true
		// of such a run, not a false alarm, and timing decides which.
		alt: map[string][]verdict{"eof-inflight": {pass(reports.RuleShutdownSIGTERM)}},
	},
	{
		name:    "notion-mcp-server",
		command: registryServer("@notionhq/notion-mcp-server/bin/cli.mjs", "NOTION_TOKEN=mcpchaos-no-token"),
		want:    diesOfEPIPE(nil),
	},
	{
		// Its search tool cannot reach DuckDuckGo; on mcp 2.3.0, as
		// mcp-server-time.
		name:    "duckduckgo-mcp-server",
		command: pyServer("duckduckgo-mcp-server"),
		want:    diesOfEPIPE(map[string]verdict{"eof-inflight": pass(lostAtShutdown)}),
		alt:     pyAlt(map[string][]verdict{"eof-inflight": {pass()}}),
	},
	{
		name:    "tavily-mcp",
		command: registryServer("tavily-mcp/build/index.js", "TAVILY_API_KEY=mcpchaos-no-key"),
		want:    diesOfEPIPE(nil),
	},
}

// registryServer runs the script at path in the corpus's npm install with
// node, its environment given env: the key its service wants, made up.
func registryServer(path string, env ...string) func(corpus, scratch string) []string {
	return func(corpus, _ string) []string {
		return append(append([]string{"env"}, env...), "node", filepath.Join(corpus, "npm/node_modules", path))
	}
}

func corpusDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../.corpus")
	if err != nil {
		t.Fatal(err)
	}
	for _, stamp := range []string{"npm/.mcpchaos-installed", "py/.mcpchaos-installed", "python-sdk/examples", "go-sdk/bin/everything", "mcp-go/bin/everything"} {
		if _, err := os.Stat(filepath.Join(dir, stamp)); err != nil {
			t.Fatalf("the corpus is not installed (%v): run ./scripts/install-corpus", err)
		}
	}
	return dir
}

// corpusCoverage is, for each server, how many requests its capabilities
// make callable (the handshake aside) and how many the probe's baseline
// session sent (issue 29; docs/corpus.md's coverage table). Those not sent
// are a listing of nothing: no prompt to get, no resource or template to read.
var corpusCoverage = map[string][2]int{
	"server-everything":                    {17, 17},
	"server-memory":                        {8, 8},
	"server-filesystem":                    {3, 3},
	"server-sequential-thinking":           {3, 3},
	"mcp-server-time":                      {5, 7},
	"mcp-server-git":                       {5, 7},
	"mcp-server-fetch":                     {6, 7},
	"fastmcp 4 server":                     {7, 7},
	"python-sdk simple-tool":               {2, 2},
	"python-sdk tool_progress":             {5, 7},
	"python-sdk sampling":                  {5, 7},
	"typescript-sdk progressExample":       {4, 4},
	"typescript-sdk mcpServerOutputSchema": {3, 3},
	"typescript-sdk toolWithSampleServer":  {3, 3},
	"go-sdk everything":                    {8, 8},
	"mcp-go everything":                    {8, 8},
	"mcp-go sampling_server":               {2, 2},
	"brave-search-mcp-server":              {4, 4},
	"notion-mcp-server":                    {3, 3},
	"duckduckgo-mcp-server":                {5, 7},
	"tavily-mcp":                           {3, 3},
}

// TestCorpusVerdicts runs each server's default matrix as a user's
// `mcpchaos test` does, side by side (as many runs at once as the machine
// takes). With MCPCHAOS_CORPUS_HOGS=N (scripts/test sets it for a second
// pass, alone), N processes spin on the CPU meanwhile, as a neighbour job
// on a CI runner does: the verdicts must not change (issue 31: a handler
// slowed by its neighbours is not hung).
func TestCorpusVerdicts(t *testing.T) {
	dir := corpusDir(t)
	// The TypeScript SDK's example servers ship inside the SDK that
	// examples/typescript pins.
	typeScriptSDK(t, filepath.Join(repoRoot(t), "examples", "typescript"))
	if n := os.Getenv("MCPCHAOS_CORPUS_HOGS"); n != "" {
		hogs, err := strconv.Atoi(n)
		if err != nil || hogs < 1 {
			t.Fatalf("MCPCHAOS_CORPUS_HOGS=%q: want how many CPU hogs to run, a positive number", n)
		}
		spinCPU(t, hogs)
	}
	for _, srv := range corpus {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			report := runCorpusServer(t, dir, srv, faults.ServerScenarios())
			got := verdictsOf(report)
			var b strings.Builder
			reports.WriteSummary(&b, report)
			for name, want := range srv.want {
				g := got[name]
				if cmp.Equal(want, g) || slices.ContainsFunc(srv.alt[name], func(a verdict) bool { return cmp.Equal(a, g) }) {
					continue
				}
				t.Errorf("%s: %+v, want %+v (or one of %+v)", name, g, want, srv.alt[name])
			}
			if len(got) != len(srv.want) {
				t.Errorf("scenarios run: %d, want %d", len(got), len(srv.want))
			}
			cov, ok := corpusCoverage[srv.name]
			if !ok {
				t.Errorf("corpusCoverage has no row for %s", srv.name)
			}
			if want := fmt.Sprintf("the session sent %d of the %d requests", cov[0], cov[1]); len(report.Baseline.Notes) == 0 || !strings.HasPrefix(report.Baseline.Notes[0], want) {
				t.Errorf("the baseline's first note is %q, want it to start %q", report.Baseline.Notes, want)
			}
			if t.Failed() {
				t.Logf("the run:\n%s", b.String())
			}
		})
	}
}

// runCorpusServer runs scenarios against srv as a user's mcpchaos test
// does, with a git repository in its scratch directory (mcp-server-git
// serves one).
func runCorpusServer(t *testing.T, dir string, srv corpusServer, scenarios []faults.Scenario) *reports.Report {
	t.Helper()
	scratch := t.TempDir()
	repo := filepath.Join(scratch, "repo")
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	report, err := suite.Run(ctx, suite.Options{
		Command:   srv.command(dir, scratch),
		Scenarios: scenarios,
		Seed:      1,
		Deadline:  srv.deadline,
		Probe:     probe.Config{SkipTools: srv.skipTools},
		Repro:     func(s string, seed uint64) string { return fmt.Sprintf("--scenario %s --seed %d", s, seed) },
	})
	if err != nil {
		t.Fatalf("suite.Run: %v", err)
	}
	return report
}

// verdictsOf reads each scenario's verdict (the baseline's included) off a
// report.
func verdictsOf(r *reports.Report) map[string]verdict {
	rules := map[string][]string{}
	for _, f := range r.Findings {
		rules[f.Scenario] = append(rules[f.Scenario], f.Rule)
	}
	out := map[string]verdict{}
	for _, s := range append([]reports.ScenarioResult{*r.Baseline}, r.Scenarios...) {
		rs := rules[s.Name]
		slices.Sort(rs)
		out[s.Name] = verdict{s.Outcome, slices.Compact(rs)}
	}
	return out
}

// spinCPU keeps n processes busy on the CPU until the test ends (the
// subtests of a parallel test included): each is a shell spinning in a
// loop, at the priority of everything else.
func spinCPU(t *testing.T, n int) {
	t.Helper()
	var hogs []*exec.Cmd
	for range n {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatalf("a CPU hog did not start: %v", err)
		}
		hogs = append(hogs, hog)
	}
	t.Cleanup(func() {
		for _, hog := range hogs {
			_ = hog.Process.Kill()
			_ = hog.Wait()
		}
	})
	t.Logf("%d CPU hogs spin beside the corpus", n)
}
