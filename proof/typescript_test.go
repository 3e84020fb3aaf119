package proof

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// Row 4 of issue 4: a stdio server and a stdio client on the current
// TypeScript SDK (@modelcontextprotocol/sdk, pinned exactly in
// examples/typescript/package.json), each through mcpchaos's whole default
// matrix. Nothing here is a planted bug: the test pins what the released SDK
// does today, so that a change in the SDK or in the judge shows up as a diff.
// examples/typescript/README.md explains each row.
//
// Every expectation below was the same over seeds 1 to 10 through
// bin/mcpchaos (test and test-client), over 36 more server runs of the eof
// and half-close scenarios six at a time on a 2-core machine, and over
// repeated runs of this test; none is timing-dependent, so none is allowed to
// come or go.
func TestTypeScriptSDK(t *testing.T) {
	root := repoRoot(t)
	dir := filepath.Join(root, "examples", "typescript")
	node := typeScriptSDK(t, dir)
	bin := mcpchaosBinary(t)

	t.Run("server", func(t *testing.T) {
		t.Parallel()
		command := []string{node, filepath.Join(dir, "server.mjs")}
		ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
		defer cancel()
		start := time.Now()
		report, err := suite.Run(ctx, suite.Options{
			Command:   command,
			Scenarios: faults.ServerScenarios(),
			Seed:      1,
			Deadline:  5 * time.Second,
			Parallel:  2,
			Repro: func(s string, seed uint64) string {
				return fmt.Sprintf("mcpchaos test --scenario %s --seed %d -- %s", s, seed, suite.ShellQuote(command))
			},
		})
		if err != nil {
			var setup *suite.SetupError
			if errors.As(err, &setup) {
				t.Fatalf("suite.Run: %v\nserver stderr:\n%s", err, strings.Join(setup.Stderr, "\n"))
			}
			t.Fatalf("suite.Run: %v", err)
		}
		t.Logf("server matrix in %s (baseline %dms, %s)", time.Since(start).Round(time.Millisecond),
			report.Baseline.DurationMS, scenarioTimes(report))

		want := []found{
			// Both eof scenarios leave the `roots` handler waiting for the
			// answer to its roots/list, which mcpchaos drops: the server's
			// stdin is already closed. StdioServerTransport (1.32.2) listens
			// for stdin 'data' and 'error' but not 'end' (typescript-sdk
			// #2002, open), so the Protocol is never closed, the pending
			// request is never failed, and its 60s default request timeout
			// keeps Node's event loop alive: the server outlives the 3s
			// grace and SIGTERM ends it (left alone it would answer the call
			// with "Request timed out" and exit 0 after 60s). Without a
			// pending server-to-client request it exits by event-loop drain
			// (the baseline, stall-s2c, burst-c2s): only `slow`, answered
			// before the grace runs out, is in flight then.
			{"eof-inflight", "zombie", ""},
			{"eof-server-request", "zombie", ""},
			// half-close-s2c: see below.
			{"half-close-s2c", "crash", "node:unhandled-error EPIPE"},
		}
		wantFindings(t, report, want)
		wantSaid(t, report, reports.KindZombie, "SIGTERM ended it")

		wantOutcomes := map[string]string{
			"stall-s2c": "pass", "burst-c2s": "pass",
			// SIGTERM ends the server: the specification's stdio shutdown
			// allows it, so the zombies are warnings and the runs pass.
			"eof-inflight": "pass", "eof-server-request": "pass",
			// half-close-s2c: the server's first write after the half-close
			// (echo's answer) fails with EPIPE, and StdioServerTransport has
			// no 'error' listener on stdout (typescript-sdk #1564, fixed in
			// v2 by #1568; the v1.x backport #2579 is not released in
			// 1.32.2), so Node dies of an unhandled 'error' event, exit 1.
			// The fault made the write fail, and exiting is fair with no
			// way to answer, but the unhandled exception is still a crash:
			// the warning crash-after-half-close (docs/verdicts.md), so
			// the scenario passes unless --strict. It was a note.
			"half-close-s2c": "pass",
			// server.mjs lists no prompt or resource and runs no task.
			"eof-surface": "indeterminate", "eof-task": "indeterminate",
		}
		checkOutcomes(t, report, wantOutcomes)
		for _, f := range report.Findings {
			if (f.Kind == "zombie" || f.Kind == "crash") && f.Severity != reports.SeverityWarning {
				t.Errorf("%s: the %s is a %s, want a warning", f.Scenario, f.Kind, f.Severity)
			}
			if f.Kind == "crash" && f.Rule != reports.RuleCrashAfterHalfClose {
				t.Errorf("%s: the crash cites %s, want %s", f.Scenario, f.Rule, reports.RuleCrashAfterHalfClose)
			}
		}
		wantSaid(t, report, reports.KindCrash, "after mcpchaos closed its output")
	})

	t.Run("client", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
		defer cancel()
		start := time.Now()
		report, err := suite.RunClient(ctx, suite.ClientOptions{
			Client:    []string{node, filepath.Join(dir, "client.mjs")},
			Server:    []string{bin, "serve"},
			Self:      []string{bin},
			Scenarios: faults.ClientScenarios(),
			Seed:      1,
			Deadline:  10 * time.Second,
		})
		if err != nil {
			t.Fatalf("suite.RunClient: %v", err)
		}
		t.Logf("client matrix in %s (%s)", time.Since(start).Round(time.Millisecond), scenarioTimes(report))

		// No finding. The SDK's client handles progress for the call's
		// token (onprogress, 20 before the result), ignores a
		// tools/list_changed it has no handler for, waits out the 2s stall,
		// and exits.
		//
		// server-eof passes without testing what it is for: the bundled
		// server (mcp-go) answers the echo call that reached it before it
		// exits, so the client gets its result and exits 0 (seeds 1 to 10:
		// the answer always came, once even before the EOF was recorded).
		// Its "Connection closed" path is not exercised here; README.md
		// here shows it by hand (eof with position=before: exit 1 within
		// 0.2s, the McpError's stack on stderr, no crash signature).
		wantFindings(t, report, []found{})
		checkOutcomes(t, report, map[string]string{
			"progress-before-response": "pass", "list-changed-mid-call": "pass",
			"slow-server": "pass", "server-eof": "pass",
		})
	})
}

// typeScriptSDK checks that examples/typescript/install.sh has installed the
// pinned SDK and returns the node to run the examples with. A missing one
// fails the proof: skipped, it would prove nothing.
func typeScriptSDK(t *testing.T, dir string) string {
	t.Helper()
	const run = "run scripts/install-sdks first (or examples/typescript/install.sh alone: npm ci of the pinned @modelcontextprotocol/sdk)"
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH (%v): the TypeScript proof needs Node.js 20 or newer; then %s", err, run)
	}
	sdk := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")
	if _, err := os.Stat(sdk); err != nil {
		t.Fatalf("%s is missing (%v): %s", sdk, err, run)
	}
	var pkg struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, filepath.Join(dir, "package.json"), &pkg)
	want := pkg.Dependencies["@modelcontextprotocol/sdk"]
	readJSON(t, filepath.Join(sdk, "package.json"), &pkg)
	if pkg.Version != want {
		t.Fatalf("%s is version %s, but package.json pins %s: %s", sdk, pkg.Version, want, run)
	}
	t.Logf("@modelcontextprotocol/sdk %s, %s", pkg.Version, node)
	return node
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkOutcomes compares each scenario's outcome (pass, fail, indeterminate)
// with want, which names every scenario of the matrix.
func checkOutcomes(t *testing.T, r *reports.Report, want map[string]string) {
	t.Helper()
	if r.Baseline == nil || r.Baseline.Outcome != reports.OutcomePass {
		t.Errorf("the baseline did not pass: %+v", r.Baseline)
	}
	got := map[string]string{}
	for _, s := range r.Scenarios {
		got[s.Name] = s.Outcome
	}
	if diff := cmp.Diff(want, got); diff != "" {
		var b strings.Builder
		reports.WriteSummary(&b, r)
		t.Errorf("scenario outcomes (-want +got):\n%s\n%s", diff, b.String())
	}
}
