package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

func sessionScenarios(t *testing.T, names ...string) []faults.Scenario {
	t.Helper()
	var out []faults.Scenario
	for _, p := range faults.Presets() {
		if p.For == faults.ForHTTPServer && slices.Contains(names, p.Scenario.Name) {
			out = append(out, p.Scenario)
		}
	}
	if len(out) != len(names) {
		t.Fatalf("found %d of the scenarios %v", len(out), names)
	}
	return out
}

// The planted shared-server sends every message of a call through the
// session that connected last (typescript-sdk GHSA-345p-7cg4-v4c7): the
// sessions scenario finds one session's answers, progress and log lines in
// the other's, and its fixed twin passes every scenario of several
// sessions. Each session's transcript is kept, and mcpchaos judge on them
// gives the verdict the run gave.
func TestSeveralSessions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fixed    bool
		sessions int
	}{
		{"shared-server", false, 0},
		{"shared-server/fixed", true, 0},
		{"shared-server/three", false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u, served := httpServed(t)
			addr := served[len(served)-1]
			command := []string{filepath.Join(examplesDir, "shared-server"), "--addr", addr}
			if tc.fixed {
				command = append(command, "--fixed")
			}
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			report, err := Run(ctx, Options{Command: command, URL: u, Scenarios: sessionScenarios(t, "sessions", "sessions-one-ends"),
				Seed: 1, Deadline: 3 * time.Second, Grace: 2 * time.Second, Sessions: tc.sessions, TranscriptDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			// The bug is in every session's calls, so the scenario with a
			// fault finds it too (a session robbed of its answers is
			// harmed, whatever else happened): only the quiet scenario's
			// findings are pinned.
			// With two sessions the second always opens last, and its
			// stream gets the first's messages; with more, the answers of
			// the sessions robbed may all be dropped (no stream of the
			// last session's is open for their ids), and their hangs are
			// what is left to see.
			var want []found
			if !tc.fixed {
				want = []found{{"sessions", reports.KindCrossSession, ""}}
			}
			got := summarize(ownOf(report.Findings, "sessions"))
			switch {
			case tc.fixed && len(report.Findings) > 0, !tc.fixed && tc.sessions == 0 && !cmp.Equal(want, got):
				t.Errorf("findings: want %v in sessions (and no other for the fixed twin)\n%s", want, reportText(report))
			case !tc.fixed && !reports.Failing(ownOf(report.Findings, "sessions")):
				t.Errorf("sessions passed a server that sends every session's messages down the last one's\n%s", reportText(report))
			}
			n := max(tc.sessions, 2)
			for _, sc := range report.Scenarios {
				if sc.Sessions != n || len(sc.Transcripts) != n {
					t.Errorf("%s: %d sessions, transcripts %v; want %d of each", sc.Name, sc.Sessions, sc.Transcripts, n)
				}
				if sc.Outcome == reports.OutcomeIndeterminate {
					t.Errorf("%s: indeterminate %q", sc.Name, sc.Indeterminate)
				}
				rejudged := rejudgeSessions(t, sc.Transcripts)
				if diff := cmp.Diff(summarize(ownOf(report.Findings, sc.Name)), summarize(rejudged.Findings)); diff != "" && sc.Name == "sessions" {
					t.Errorf("%s judged again from its transcripts (-live +offline):\n%s", sc.Name, diff)
				}
			}
			for _, f := range report.Findings {
				if f.Kind != reports.KindCrossSession {
					continue
				}
				if len(f.Sessions) != 2 {
					t.Errorf("finding %s: sessions %v, want the two it crossed between", f.Rule, f.Sessions)
				}
				if f.Rule == reports.RuleCrossSessionMessage && !strings.Contains(f.Message, "mcpchaos-s") {
					t.Errorf("finding %s does not name the marker: %s", f.Rule, f.Message)
				}
			}
		})
	}
}

func ownOf(fs []reports.Finding, scenario string) []reports.Finding {
	var out []reports.Finding
	for _, f := range fs {
		if f.Scenario == scenario {
			out = append(out, f)
		}
	}
	return out
}

// rejudgeSessions judges a run's transcripts offline, as mcpchaos judge does.
func rejudgeSessions(t *testing.T, paths []string) judge.Verdict {
	t.Helper()
	var events [][]wire.Event
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var evs []wire.Event
		if err := wire.ReadTranscript(bytes.NewReader(b), func(e wire.Event) error {
			evs = append(evs, e)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		events = append(events, evs)
	}
	return JudgeSessions(events)
}

// A server that refuses a second session while the first is open serves one
// client at a time: the scenarios of several sessions say so in a note and
// are indeterminate, never a finding.
func TestSessionsAgainstAServerOfOneClient(t *testing.T) {
	mcp := server.NewStreamableHTTPServer(everything.New(), server.WithStateful(true))
	// The sessions of a scenario start together, and the baseline's is
	// over 300 ms before the scenario starts: an initialize within 300 ms
	// of another meets that one still open.
	var mu sync.Mutex
	var last time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		refuse := false
		if r.Method == http.MethodPost && m.Method == "initialize" {
			refuse = time.Since(last) < 300*time.Millisecond
			last = time.Now()
		}
		mu.Unlock()
		if refuse {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Already connected to a transport"}}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		mcp.ServeHTTP(w, r)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	report, err := Run(ctx, Options{URL: u, Scenarios: sessionScenarios(t, "sessions"), Seed: 1, Deadline: 2 * time.Second, Grace: time.Second,
		Probe: probe.Config{Era: probe.EraStateful}, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	sc := report.Scenarios[0]
	if sc.Outcome != reports.OutcomeIndeterminate || len(report.Findings) != 0 {
		t.Fatalf("outcome %s with %d findings, want indeterminate with none\n%s", sc.Outcome, len(report.Findings), reportText(report))
	}
	if !slices.ContainsFunc(sc.Notes, func(n string) bool {
		// Either may be the one the server opened first.
		return strings.Contains(n, "was refused its initialize with HTTP 500 while session") && strings.Contains(n, "serves one client at a time")
	}) {
		t.Errorf("notes %q do not say a second session was refused", sc.Notes)
	}
}

// test-client --clients N: N copies of the mcp-go example client at once
// against one server, in every run, each judged on its own and side by
// side. The mcp-go server keeps its sessions apart: the verdicts are those
// of one client (TestHTTPClientMatrixOnTheMCPGoClient), each finding
// naming the copies it was read from, and each run keeps a transcript per
// copy.
func TestClientsAtOnce(t *testing.T) {
	client := filepath.Join(t.TempDir(), "client")
	if out, err := exec.Command("go", "build", "-o", client, "github.com/mcpchaos/mcpchaos/examples/cmd/client").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	u, server := httpServed(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	report, err := RunClient(ctx, ClientOptions{
		Client: []string{client, "--timeout", "20s", "--protocol", "2025-11-25"}, Server: server, ServerURL: u, Clients: 3,
		Scenarios: faults.HTTPClientScenarios(), Seed: 1, Deadline: 10 * time.Second, HangAfter: 10 * time.Second, Grace: 2 * time.Second,
		Parallel: 1, TranscriptDir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []found{{"session-expired", reports.KindProtocolViolation, ""}, {"session-forgotten", reports.KindProtocolViolation, ""}}
	if diff := cmp.Diff(want, summarize(report.Findings)); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", diff, reportText(report))
	}
	for _, f := range report.Findings {
		if !cmp.Equal(f.Sessions, []int{1, 2, 3}) {
			t.Errorf("%s in %s: read from sessions %v, want all three copies alike", f.Rule, f.Scenario, f.Sessions)
		}
	}
	for _, sc := range append([]reports.ScenarioResult{*report.Baseline}, report.Scenarios...) {
		if sc.Sessions != 3 || len(sc.Transcripts) != 3 || !strings.HasSuffix(sc.Transcripts[2], sc.Name+"-c3.jsonl") {
			t.Errorf("%s: %d sessions, transcripts %v; want one per copy", sc.Name, sc.Sessions, sc.Transcripts)
		}
	}

	if _, err := RunClient(ctx, ClientOptions{Client: []string{client}, Server: server, Clients: 2, Scenarios: faults.ClientScenarios()}); err == nil ||
		!strings.Contains(err.Error(), "share one HTTP server") {
		t.Errorf("several clients over stdio: err = %v, want a refusal that says why", err)
	}
}

// sessions-shutdown asks the server to stop (SIGTERM) while three sessions
// have calls in flight (issue 39: the seeds' class across sessions). The
// planted shutdown-race walks its table of calls by a length read before
// the walk while each call it cancels leaves the table: a Go panic, found
// by its signature in every session's record and reported once. Its fixed
// twin stops cleanly, and the calls the shutdown cut short, in every
// session, are the fault's: no finding, no harm read across sessions. A
// server the run did not start has no process to signal: the scenario is
// indeterminate, never a pass.
func TestSessionsShutdown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fixed bool
		want  []found
	}{
		{"shutdown-race", false, []found{{"sessions-shutdown", reports.KindCrash, "go:panic"}}},
		{"shutdown-race/fixed", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			report := runPlantedSessions(t, "shutdown-race", tc.fixed, "sessions-shutdown")
			if diff := cmp.Diff(tc.want, summarize(report.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, reportText(report))
			}
			sc := report.Scenarios[len(report.Scenarios)-1]
			if sc.Outcome == reports.OutcomeIndeterminate || sc.Sessions != 3 {
				t.Errorf("%s: outcome %s (%q), %d sessions; want judged, 3 sessions", sc.Name, sc.Outcome, sc.Indeterminate, sc.Sessions)
			}
			if !slices.ContainsFunc(sc.Notes, func(n string) bool { return strings.Contains(n, "after mcpchaos signalled") }) {
				t.Errorf("notes %q do not say what the signal cut short", sc.Notes)
			}
			rejudged := rejudgeSessions(t, sc.Transcripts)
			if diff := cmp.Diff(summarize(ownOf(report.Findings, sc.Name)), summarize(rejudged.Findings)); diff != "" {
				t.Errorf("judged again from its transcripts (-live +offline):\n%s", diff)
			}
		})
	}
	t.Run("a server the run did not start", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(server.NewStreamableHTTPServer(everything.New(), server.WithStateful(true)))
		defer srv.Close()
		u, _ := url.Parse(srv.URL + "/mcp")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		report, err := Run(ctx, Options{URL: u, Scenarios: sessionScenarios(t, "sessions-shutdown"), Seed: 1, Deadline: 2 * time.Second, Grace: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		sc := report.Scenarios[len(report.Scenarios)-1]
		if sc.Outcome != reports.OutcomeIndeterminate || len(report.Findings) != 0 || !strings.Contains(strings.Join(sc.Indeterminate, " "), "did not start this server") {
			t.Errorf("outcome %s (%q) with %d findings; want indeterminate, saying mcpchaos did not start the server\n%s", sc.Outcome, sc.Indeterminate, len(report.Findings), reportText(report))
		}
	})
}

// The planted global-level keeps one log level for the whole server: once
// the second session sets debug (the probe's sessions after the first set
// theirs once the first has set info), the first gets debug lines it asked
// not to get. The check across sessions names both (a warning: the
// schema's "should"), in place of the first session's own log-below-level;
// the fixed twin, a level per session, passes. Neither twin is seen by one
// session alone.
func TestSessionsLogLevels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fixed bool
		want  []string
	}{
		{"global-level", false, []string{"sessions cross-session-log-level [2 1]"}},
		{"global-level/fixed", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			report := runPlantedSessions(t, "global-level", tc.fixed, "sessions")
			var got []string
			for _, f := range report.Findings {
				got = append(got, fmt.Sprintf("%s %s %v", f.Scenario, f.Rule, f.Sessions))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, reportText(report))
			}
			sc := report.Scenarios[len(report.Scenarios)-1]
			rejudged := rejudgeSessions(t, sc.Transcripts)
			if diff := cmp.Diff(summarize(ownOf(report.Findings, sc.Name)), summarize(rejudged.Findings)); diff != "" {
				t.Errorf("judged again from its transcripts (-live +offline):\n%s", diff)
			}
		})
	}
}

// runPlantedSessions runs a scenario of several sessions against a planted
// HTTP example (its fixed twin when fixed), keeping the transcripts.
func runPlantedSessions(t *testing.T, example string, fixed bool, scenario string) *reports.Report {
	t.Helper()
	u, served := httpServed(t)
	command := []string{filepath.Join(examplesDir, example), "--addr", served[len(served)-1]}
	if fixed {
		command = append(command, "--fixed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	report, err := Run(ctx, Options{Command: command, URL: u, Scenarios: sessionScenarios(t, scenario),
		Seed: 1, Deadline: 3 * time.Second, Grace: 2 * time.Second, TranscriptDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return report
}
