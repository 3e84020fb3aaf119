package proof

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// mcpchaos explore on the corpus: each server of the stdio corpus (corpus,
// in corpus_test.go) and of the HTTP one (TestURLMatrixOnRealServers, and
// FastMCP 4.2.3 of the HTTP client corpus) searched as a user's
// `mcpchaos explore --seed 1 --budget B` does. docs/corpus.md, "mcpchaos
// explore on the corpus", gives what each search did and reads every
// finding against the MCP specification.

// exploreTarget is one corpus server as explore is pointed at it: its
// flags and command after explore's own flags ([--url U ...] -- CMD),
// given the corpus directory, the repository and a scratch directory.
type exploreTarget struct {
	name      string
	transport string // "stdio" or "http"
	args      func(t *testing.T, corpus, root, scratch string) []string
}

// stdioExploreTargets are the stdio corpus's servers, run as
// TestCorpusVerdicts runs them (the same command and --deadline).
func stdioExploreTargets() []exploreTarget {
	var out []exploreTarget
	for _, srv := range corpus {
		out = append(out, exploreTarget{name: srv.name, transport: "stdio",
			args: func(t *testing.T, corpus, _, scratch string) []string {
				var args []string
				if srv.deadline > 0 {
					args = append(args, "--deadline", srv.deadline.String())
				}
				return append(append(args, "--"), srv.command(corpus, scratch)...)
			}})
	}
	return out
}

// httpExploreTarget serves its MCP endpoint at /mcp on 127.0.0.1: on port
// if set (a server that can listen on no other), else on a free port.
func httpExploreTarget(name string, port int, flags []string, command func(corpus, root string, port int) []string) exploreTarget {
	return exploreTarget{name: name, transport: "http",
		args: func(t *testing.T, corpus, root, _ string) []string {
			p := port
			if p == 0 {
				p = freePort(t)
			} else if err := portFree(p); err != nil {
				t.Skipf("the server can only listen on port %d, which is taken: %v", p, err)
			}
			args := append([]string{"--url", fmt.Sprintf("http://127.0.0.1:%d/mcp", p)}, flags...)
			return append(append(args, "--"), command(corpus, root, p)...)
		}}
}

func portFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	return l.Close()
}

// httpExploreTargets are the HTTP servers of TestURLMatrixOnRealServers,
// started and probed as it does (the same --skip-tool, --call and
// --header), and FastMCP 4.2.3 as the HTTP client corpus serves it.
func httpExploreTargets() []exploreTarget {
	node := func(env []string, script string, args ...string) []string {
		return append(append(append([]string{"env"}, env...), "node", script), args...)
	}
	return []exploreTarget{
		httpExploreTarget("server-everything 2026.8.31", 0, []string{"--skip-tool", "trigger-long-running-operation"},
			func(corpus, _ string, port int) []string {
				return node([]string{fmt.Sprintf("PORT=%d", port)},
					filepath.Join(corpus, "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp")
			}),
		httpExploreTarget("python-sdk everything-server", 0, nil,
			func(corpus, _ string, port int) []string {
				return []string{"env", "PYTHONPATH=" + filepath.Join(corpus, "python-sdk/examples/servers/everything-server"),
					filepath.Join(corpus, "py/bin/python"), "-m", "mcp_everything_server", "--port", fmt.Sprint(port)}
			}),
		httpExploreTarget("go-sdk everything", 0, []string{"--skip-tool", "elicit (form)"},
			func(corpus, _ string, port int) []string {
				return []string{filepath.Join(corpus, "go-sdk/bin/everything"), "-http", fmt.Sprintf("127.0.0.1:%d", port)}
			}),
		httpExploreTarget("mcp-go everything", 8080, []string{"--call", `longRunningOperation={"duration":1,"steps":2}`},
			func(corpus, _ string, _ int) []string {
				return []string{filepath.Join(corpus, "mcp-go/bin/everything"), "-t", "http"}
			}),
		httpExploreTarget("typescript-sdk simpleStreamableHttp", 0, nil,
			func(corpus, _ string, port int) []string {
				return node([]string{fmt.Sprintf("MCP_PORT=%d", port)}, tsServerExample(corpus, "simpleStreamableHttp.js"))
			}),
		httpExploreTarget("typescript-sdk simpleStatelessStreamableHttp", 3000, nil,
			func(corpus, _ string, _ int) []string {
				return []string{"node", tsServerExample(corpus, "simpleStatelessStreamableHttp.js")}
			}),
		httpExploreTarget("typescript-sdk jsonResponseStreamableHttp", 3000, nil,
			func(corpus, _ string, _ int) []string {
				return []string{"node", tsServerExample(corpus, "jsonResponseStreamableHttp.js")}
			}),
		// Its summarizer's 20 fetches wait on the machine's resolver (the
		// stdio corpus says more).
		httpExploreTarget("brave-search-mcp-server", 0, []string{"--skip-tool", "brave_summarizer"},
			func(corpus, _ string, port int) []string {
				return node([]string{"BRAVE_API_KEY=mcpchaos-no-key"},
					filepath.Join(corpus, "npm/node_modules/@brave/brave-search-mcp-server/dist/index.js"),
					"--transport", "http", "--port", fmt.Sprint(port))
			}),
		httpExploreTarget("notion-mcp-server", 0, []string{"--header", "Authorization: Bearer mcpchaos-secret"},
			func(corpus, _ string, port int) []string {
				return node([]string{"NOTION_TOKEN=mcpchaos-no-token"},
					filepath.Join(corpus, "npm/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs"),
					"--transport", "http", "--port", fmt.Sprint(port), "--auth-token", "mcpchaos-secret")
			}),
		httpExploreTarget("fastmcp 4.2.3", 0, nil, func(corpus, root string, port int) []string {
			return fastmcpServer.command(root, corpus, port)
		}),
	}
}

// exploreRun is what one search of one server came to.
type exploreRun struct {
	report *reports.Report
	path   string // the report's
	output string // explore's stdout and stderr
}

// runExplore runs `mcpchaos explore --seed 1 --report R extra... args...` on
// tgt; the report, the transcripts (with keep) and explore's output go
// into dir.
func runExplore(t *testing.T, bin string, tgt exploreTarget, dir string, keep bool, timeout time.Duration, extra ...string) exploreRun {
	t.Helper()
	root := repoRoot(t)
	corpus := corpusDir(t)
	scratch := t.TempDir()
	repo := filepath.Join(scratch, "repo")
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	report := filepath.Join(dir, "report.json")
	args := append([]string{"explore", "--seed", "1", "--report", report}, extra...)
	if keep {
		args = append(args, "--transcript-dir", filepath.Join(dir, "transcripts"))
	}
	args = append(args, tgt.args(t, corpus, root, scratch)...)
	out := runFinding(t, bin, scratch, timeout, args...)
	_ = os.WriteFile(filepath.Join(dir, "output.txt"), out, 0o644)
	var r reports.Report
	readJSON(t, report, &r)
	if r.Explore == nil {
		t.Fatalf("%s has no explore section", report)
	}
	return exploreRun{report: &r, path: report, output: string(out)}
}

// runFinding runs bin args in dir within timeout and returns its output;
// exit 1 is a run that found something (its report says what), any other
// failure fails the test.
func runFinding(t *testing.T, bin, dir string, timeout time.Duration, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("%s: %v\n%s", suite.ShellQuote(append([]string{bin}, args...)), err, tail(out, 3000))
	}
	return out
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// exploreLine is the search of one server in one line: points enumerated,
// runs made (systematic + combinations), runs saved by reduction, runs
// that did not land, time to the first finding, and each finding with its
// smallest plan and how often it reproduced.
func exploreLine(name, transport string, r *reports.Report) string {
	x := r.Explore
	first := "none"
	if len(x.Found) > 0 {
		ms := x.Found[0].FoundAfterMS
		for _, f := range x.Found {
			ms = min(ms, f.FoundAfterMS)
		}
		first = (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
	}
	line := fmt.Sprintf("%s (%s): %d points, %d runs (%d systematic + %d combinations), %d saved by reduction, %d not landed, first finding after %s, %d shrink + %d repeat runs, %s of %s",
		name, transport, x.Points, x.SystematicRuns+x.CombinationRuns, x.SystematicRuns, x.CombinationRuns,
		x.SkippedByReduction, x.NotLanded, first, x.ShrinkRuns, x.RepeatRuns,
		time.Duration(x.ElapsedMS)*time.Millisecond, time.Duration(x.BudgetMS)*time.Millisecond)
	if len(x.Found) == 0 {
		return line + "; found nothing"
	}
	for _, f := range x.Found {
		line += fmt.Sprintf("; found %q: minimal %s, reproduced %d/%d (first %s after %s)",
			f.Signature, strings.Join(f.Minimal, " + "), f.Reproduced, f.Tries,
			strings.Join(f.First, " + "), time.Duration(f.FoundAfterMS)*time.Millisecond)
	}
	return line
}

var unsafeDirName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// TestExploreCorpus searches every server of the corpus, stdio and HTTP,
// with `mcpchaos explore --seed 1 --budget $MCPCHAOS_EXPLORE_BUDGET`, one
// server at a time (each search runs as many runs at once as the machine
// takes), and logs a line a server. With MCPCHAOS_EXPLORE_OUT=DIR each
// server's report, transcripts and output are kept in DIR/<server>, to read
// the findings by. Skipped without a budget: 31 servers at 2 min each is an
// hour, more than CI gives the proof.
func TestExploreCorpus(t *testing.T) {
	b := os.Getenv("MCPCHAOS_EXPLORE_BUDGET")
	if b == "" {
		t.Skip("set MCPCHAOS_EXPLORE_BUDGET (as in 2m) to search every server of the corpus for that long each")
	}
	budget, err := time.ParseDuration(b)
	if err != nil || budget <= 0 {
		t.Fatalf("MCPCHAOS_EXPLORE_BUDGET=%q: want a duration, as in 2m", b)
	}
	corpusDir(t)
	typeScriptSDK(t, filepath.Join(repoRoot(t), "examples", "typescript"))
	bin := mcpchaosBinary(t)
	out := os.Getenv("MCPCHAOS_EXPLORE_OUT")
	keep := out != ""
	if !keep {
		out = t.TempDir()
	}
	var lines []string
	for _, tgt := range slices.Concat(stdioExploreTargets(), httpExploreTargets()) {
		t.Run(tgt.transport+"/"+tgt.name, func(t *testing.T) {
			dir := filepath.Join(out, tgt.transport+"-"+strings.Trim(unsafeDirName.ReplaceAllString(tgt.name, "-"), "-"))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			// The budget bounds the search and its shrinking; the re-runs
			// of what it found, the baseline and the shutdowns come on top.
			run := runExplore(t, bin, tgt, dir, keep, 2*budget+5*time.Minute, "--budget", budget.String())
			line := exploreLine(tgt.name, tgt.transport, run.report)
			t.Logf("%s (in %s; report %s)", line, time.Since(start).Round(time.Second), run.path)
			lines = append(lines, line)
			for _, f := range run.report.Findings {
				if f.Scenario != "baseline" {
					t.Logf("  %s %s/%s %s: %s\n    repro: %s", f.Severity, f.Kind, f.Rule, f.Signature, f.Message, f.Repro)
				}
			}
		})
	}
	t.Logf("mcpchaos explore on the corpus, a line a server:\n%s", strings.Join(lines, "\n"))
}

// exploreShort are the servers TestExploreCorpusShort searches: fast ones
// whose default-matrix verdicts all pass. Explore with --seed 1 and a
// 2 min budget found nothing on the two mcp-go examples, and on
// server-sequential-thinking only the crash-after-half-close warning its
// matrix pins (docs/corpus.md, "mcpchaos explore on the corpus").
var exploreShort = []string{"mcp-go everything", "mcp-go sampling_server", "server-sequential-thinking"}

// knownRules are the rules of the findings a server of the corpus is known
// for: those its pinned default-matrix verdicts cite (either verdict where
// timing decides). A finding of explore beyond them, and beyond its own
// baseline's, is new: a bug the matrix misses, or a false alarm, and either
// must be read against the specification before it is pinned here.
func knownRules(srv corpusServer) []string {
	var rules []string
	for _, v := range srv.want {
		rules = append(rules, v.Rules...)
	}
	for _, alts := range srv.alt {
		for _, v := range alts {
			rules = append(rules, v.Rules...)
		}
	}
	slices.Sort(rules)
	return slices.Compact(rules)
}

// TestExploreCorpusShort searches a few fast servers of the corpus with
// `mcpchaos explore --seed 1 --max-runs 40 --budget 60s`, and wants no
// finding but those the server is known for: a false alarm of explore on a
// server no one here wrote is as serious as a bug it misses.
func TestExploreCorpusShort(t *testing.T) {
	corpusDir(t)
	bin := mcpchaosBinary(t)
	targets := stdioExploreTargets()
	for _, name := range exploreShort {
		i := slices.IndexFunc(corpus, func(s corpusServer) bool { return s.name == name })
		if i < 0 {
			t.Fatalf("%s is not in the corpus", name)
		}
		srv, tgt := corpus[i], targets[i]
		t.Run(name, func(t *testing.T) {
			run := runExplore(t, bin, tgt, t.TempDir(), false, 5*time.Minute, "--max-runs", "40", "--budget", "60s")
			r := run.report
			t.Log(exploreLine(tgt.name, tgt.transport, r))
			if r.Explore.SystematicRuns == 0 {
				t.Errorf("the search ran nothing:\n%s", tail([]byte(run.output), 3000))
			}
			known := knownRules(srv)
			for _, f := range r.Findings {
				if f.Scenario == "baseline" {
					known = append(known, f.Rule)
				}
			}
			for _, f := range r.Findings {
				if f.Scenario != "baseline" && !slices.Contains(known, f.Rule) {
					t.Errorf("a finding the server is not known for (known: %q): %s %s/%s %s: %s\n  repro: %s",
						known, f.Severity, f.Kind, f.Rule, f.Signature, f.Message, f.Repro)
				}
			}
			if t.Failed() {
				t.Logf("explore's output:\n%s", run.output)
			}
		})
	}
}
