package proof

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// freePort is a loopback port nothing listens on, for a server to take.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// test --url -- CMD on HTTP servers no one on this project wrote: each is
// started for every scenario of the default HTTP matrix, probed through
// the proxy, and stopped with SIGTERM. Every verdict was read against the
// specification (docs/http.md, "Real servers").
func TestURLMatrixOnRealServers(t *testing.T) {
	dir := corpusDir(t)
	for _, tc := range []struct {
		name    string
		command func(port int) []string
		// port, when set, is the one port the server listens on.
		port int
		skip []string
		want []found
		// calls, when set, are the probe's calls instead of every tool.
		calls []probe.Call
		// indeterminate are the scenarios that cannot fire on it.
		indeterminate []string
		// maybe are scenarios that may be indeterminate or not: their
		// moment comes or not as the server's timing falls.
		maybe []string
		// note is what the baseline's notes must say.
		note string
		// header is sent with every request, as --header does.
		header http.Header
		// notes are what a scenario's notes must say, by scenario.
		notes map[string]string
		// lineEnd, when set, is how the server ends its event streams'
		// lines: its baseline's events must go as runs, stored so.
		lineEnd string
		// kindsOnly compares each scenario's kinds of findings, not how
		// many of each: a duplicate-response finding is one per method,
		// and how many methods a replay catches is the server's timing.
		kindsOnly bool
		// mayFind are findings that come or not as the server's timing
		// falls (beyond want, which must come).
		mayFind []found
	}{
		{
			// Stateful only (2025-11-25), with an event store for
			// resumption. Its event store (src/everything/transports/
			// streamableHttp.ts) replays every stream's events after the
			// Last-Event-ID, not only the cut stream's, and replays the
			// SDK's priming events, stored as {}, as messages: the
			// client gets answers it already had, and frames that are no
			// JSON-RPC message. Found by cut-before-result.
			name: "server-everything 2026.8.31 (npm)",
			command: func(port int) []string {
				return []string{"env", fmt.Sprintf("PORT=%d", port), "node",
					filepath.Join(dir, "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"}
			},
			// A 10 s operation; the matrix does not need it.
			skip: []string{"trigger-long-running-operation"},
			// The same replay under get-stream-dropped, whose GET stream
			// the probe resumes with Last-Event-ID: with the whole
			// surface of the server in the workload (issue 29), answers
			// of prompts, reads, subscriptions and tasks come back too.
			want: []found{
				{"cut-before-result", reports.KindDuplicateResponse, ""},
				{"cut-before-result", reports.KindProtocolViolation, ""},
				{"get-stream-dropped", reports.KindDuplicateResponse, ""},
				{"get-stream-dropped", reports.KindProtocolViolation, ""},
				// It serves the four foreign handshakes (an express()
				// app with cors({origin: "*"}) and no Host or Origin
				// check: TestRebindingOnTheSDKsServers pins the rules),
				// and listens on every interface.
				{"rebinding", reports.KindSecurity, ""},
				{"unknown-session", reports.KindProtocolViolation, ""},
			},
			kindsOnly: true,
		},
		{
			// The stateless revision, with the stateful one beside it.
			name: "python-sdk everything-server (mcp 2.3.0)",
			command: func(port int) []string {
				return []string{"env", "PYTHONPATH=" + filepath.Join(dir, "python-sdk/examples/servers/everything-server"),
					filepath.Join(dir, "py/bin/python"), "-m", "mcp_everything_server", "--port", fmt.Sprint(port)}
			},
			// Its json_schema_2020_12_tool lists a raw 2020-12
			// inputSchema that the low-level server never checks: called
			// with {} where email is required (the probe's call sent to
			// be refused), it answers a success (input-not-validated, a
			// warning).
			want: []found{{"baseline", reports.KindProtocolViolation, ""}},
			// It runs no tool as a task.
			indeterminate: []string{"end-session-task"},
			// sse-starlette's separator.
			lineEnd: "\r\n",
		},
		{
			// Its elicit (form) tool panics on a declined elicitation
			// (TestGoSDKExampleCrashesOnADeclinedElicitation); the rest
			// of the matrix runs without it.
			name: "go-sdk everything v1.8.0",
			command: func(port int) []string {
				return []string{filepath.Join(dir, "go-sdk/bin/everything"), "-http", fmt.Sprintf("127.0.0.1:%d", port)}
			},
			skip: []string{"elicit (form)"},
			// Its localhost protection (GHSA-xw59-hvm2-8pj6's fix) checks
			// Host, not Origin: a foreign Origin and Origin: null are served.
			want:          []found{{"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}},
			indeterminate: []string{"end-session-task"},
		},
		{
			// mcp-go's default session manager (StatelessGenerating-
			// SessionIdManager) answers a DELETE 200 but terminates
			// nothing (its Terminate is a no-op), so the session's next
			// POST is served: the specification wants 404 after a
			// termination, or 405 for a DELETE the server does not
			// allow. Its tools answer at once, so the probe calls only
			// its slow one: whether three calls are in flight together
			// (end-session-inflight, cut-inflight) must not be timing.
			// It checks only a session id's form ("mcp-session-" and a
			// UUID), so it serves an id it never issued: no session to
			// forget, a note under unknown-session.
			name: "mcp-go everything v1.2.1",
			command: func(int) []string {
				return []string{filepath.Join(dir, "mcp-go/bin/everything"), "-t", "http"}
			},
			port:  8080,
			calls: []probe.Call{{Tool: "longRunningOperation", Args: json.RawMessage(`{"duration":1,"steps":2}`)}},
			// Its DELETE that terminates nothing may be found again when the
			// first of two sessions is ended under sessions-one-ends, if
			// its probe sends a request in the second it goes on for.
			// Its longRunningOperation reads duration with a default
			// (GetFloat): called with a string for it (the probe's call
			// sent to be refused), it answers a success
			// (input-not-validated, a warning).
			// It checks Host, not Origin, and listens on every interface.
			want: []found{{"baseline", reports.KindProtocolViolation, ""}, {"end-session-inflight", reports.KindProtocolViolation, ""},
				{"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}},
			mayFind:       []found{{"sessions-one-ends", reports.KindProtocolViolation, ""}},
			notes:         map[string]string{"unknown-session": "the server served"},
			indeterminate: []string{"end-session-task"},
		},
		{
			// The TypeScript SDK's own example (@modelcontextprotocol/sdk
			// 1.32.2), stateful with an in-memory event store. Two of its
			// tools (delay, collect-user-info-task) may only be called as
			// tasks, which the probe does. end-session-task finds the
			// seeds' bug class in a task: once the DELETE has closed the
			// session, the delay task completes and the SDK's task store
			// (shared/protocol.js, storeTaskResult) sends its
			// notifications/tasks/status through a Protocol with no
			// transport; "Error: Not connected" goes uncaught and the
			// process, with every other session, dies (the class of
			// typescript-sdk PRs #1282 and #1283, for progress). Under
			// get-stream-dropped, collect-user-info-task may ask its
			// elicitation on the GET stream while the cut has it closed:
			// the task waits for an answer that cannot come, a note. Under
			// unknown-session, collect-user-info's elicitation may be
			// answered in a POST under the forged session id, refused
			// 400: the call waits for an answer the server never got, a
			// note too.
			name: "typescript-sdk simpleStreamableHttp (1.32.2)",
			command: func(port int) []string {
				return []string{"env", fmt.Sprintf("MCP_PORT=%d", port), "node", tsServerExample(dir, "simpleStreamableHttp.js")}
			},
			// end-session-inflight and sessions-one-ends may find the same
			// bug: when a task is running as the session is ended, its
			// status write kills the process (seen once in end-session-
			// inflight on a loaded machine), and under sessions-one-ends
			// the second session's calls in flight die with it
			// (cross-session-fault).
			// createMcpExpressApp() checks Host, not Origin (GHSA-w48q-cv73-mx4w's
			// fix), and app.listen(PORT) binds every interface.
			want: []found{{"end-session-task", reports.KindCrash, "node:Error"}, {"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}},
			mayFind: []found{{"end-session-inflight", reports.KindCrash, "node:Error"}, {"end-session-inflight", reports.KindLostResponse, ""},
				{"sessions-one-ends", reports.KindCrash, "node:Error"}, {"sessions-one-ends", reports.KindCrossSession, ""},
				{"sessions-one-ends", reports.KindLostResponse, ""}},
			lineEnd: "\n",
			note:    "the session sent 12 of the 12 requests the server's capabilities make callable",
		},
		{
			// No sessions: a transport per request, so there is no
			// session for end-session-inflight to end, nor for
			// unknown-session to forget, and no GET stream (405) for
			// get-stream-dropped to cut.
			name:          "typescript-sdk simpleStatelessStreamableHttp (1.32.2)",
			command:       func(int) []string { return []string{"node", tsServerExample(dir, "simpleStatelessStreamableHttp.js")} },
			port:          3000,
			want:          []found{{"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}},
			indeterminate: []string{"end-session-task", "end-session-inflight", "unknown-session", "get-stream-dropped", "sessions-one-ends"},
			// It answers prompts/get and resources/read at once: whether
			// the two are ever in flight together is timing (CI saw
			// cut-surface indeterminate once, the machine loaded by a
			// corpus run beside it; no finding either way).
			maybe: []string{"cut-surface"},
		},
		{
			// A server of the MCP registry, by its maker, on streamable
			// HTTP: stateful, answers as event streams, no event ids (so
			// nothing to resume after cut-before-result, which it need
			// not offer). Its tools call Brave's API, which fails here: a
			// tool error, which is an answer.
			name: "brave-search-mcp-server 2.1.4 (npm)",
			command: func(port int) []string {
				return []string{"env", "BRAVE_API_KEY=mcpchaos-no-key", "node",
					filepath.Join(dir, "npm/node_modules/@brave/brave-search-mcp-server/dist/index.js"),
					"--transport", "http", "--port", fmt.Sprint(port)}
			},
			// It checks Origin, not Host: a foreign Host without Origin is
			// served (foreign-host-served, a warning).
			want:          []found{{"rebinding", reports.KindSecurity, ""}, {"unknown-session", reports.KindProtocolViolation, ""}},
			note:          "tools answered the arguments generated from the schema with a tool error",
			indeterminate: []string{"cut-surface", "end-session-task"},
			// Its 20 fetches wait on the machine's resolver (the stdio
			// corpus says more).
			skip: []string{"brave_summarizer"},
		},
		{
			// A server of the MCP registry, by its maker, behind a bearer
			// token, which the probe sends as --header does. Every call
			// of the Notion API fails here, and the server answers each
			// with a JSON-RPC error (-32603) rather than a tool error: so
			// no result ever comes, and the two scenarios that wait for
			// one before the client has it cannot fire.
			name: "notion-mcp-server 2.5.2 (npm), with a bearer token",
			command: func(port int) []string {
				return []string{"env", "NOTION_TOKEN=mcpchaos-no-token", "node",
					filepath.Join(dir, "npm/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs"),
					"--transport", "http", "--port", fmt.Sprint(port), "--auth-token", "mcpchaos-secret"}
			},
			header: http.Header{"Authorization": {"Bearer mcpchaos-secret"}},
			// It checks neither Host nor Origin: the four foreign handshakes
			// are served (its bearer token is the client's, which they
			// carry). Without the token it answers 401 with no
			// WWW-Authenticate challenge (a warning); malformed and made-up
			// tokens, and its sessions without the token, it refuses.
			want:          []found{{"credentials", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}, {"unknown-session", reports.KindProtocolViolation, ""}},
			indeterminate: []string{"cut-before-result", "cancel-race", "cut-surface", "end-session-task"},
			note:          "tools answered the arguments generated from the schema with a JSON-RPC error",
		},
		{
			// Answers every POST with a JSON body, never a stream, and
			// offers no GET stream for get-stream-dropped to cut.
			name:          "typescript-sdk jsonResponseStreamableHttp (1.32.2)",
			command:       func(int) []string { return []string{"node", tsServerExample(dir, "jsonResponseStreamableHttp.js")} },
			port:          3000,
			want:          []found{{"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}, {"rebinding", reports.KindSecurity, ""}},
			indeterminate: []string{"cut-surface", "end-session-task", "get-stream-dropped"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := tc.port
			if port == 0 {
				port = freePort(t)
			} else if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
				t.Skipf("the server can only listen on port %d, which is taken: %v", port, err)
			} else {
				l.Close()
			}
			u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			report, err := suite.Run(ctx, suite.Options{
				Command:   tc.command(port),
				URL:       u,
				Scenarios: faults.HTTPServerScenariosFor(u, len(tc.header) > 0),
				Seed:      1,
				Deadline:  5 * time.Second,
				Probe:     probe.Config{SkipTools: tc.skip, Calls: tc.calls},
				Header:    tc.header,
				Repro:     func(sc string, seed uint64) string { return fmt.Sprintf("--scenario %s --seed %d", sc, seed) },
				// Kept, to be judged again as mcpchaos judge does.
				TranscriptDir: t.TempDir(),
			})
			if err != nil {
				t.Fatal(err)
			}
			got := withoutMaybe(report, tc.mayFind)
			if tc.kindsOnly {
				got = kindsOf(got)
			}
			summary := wantFindings(t, got, tc.want)
			if report.Baseline == nil || report.Baseline.Outcome != reports.OutcomePass {
				t.Errorf("baseline: %+v\n%s", report.Baseline, summary)
			}
			wantIndeterminate(t, report, summary, tc.indeterminate, tc.maybe...)
			if notes := strings.Join(report.Baseline.Notes, "\n"); !strings.Contains(notes, tc.note) {
				t.Errorf("the baseline's notes do not say %q:\n%s", tc.note, notes)
			}
			for _, sc := range report.Scenarios {
				if want, ok := tc.notes[sc.Name]; ok && !strings.Contains(strings.Join(sc.Notes, "\n"), want) {
					t.Errorf("%s: notes %q do not say %q", sc.Name, sc.Notes, want)
				}
			}
			wantUnknownSession400(t, report, summary)
			wantJudgedAgain(t, report)
			if tc.lineEnd != "" {
				wantRuns(t, report.Baseline.Transcript, tc.lineEnd)
			}
		})
	}
}

// wantRuns wants the transcript at path to hold the server's events as
// runs (transcript format 4), stored as they came, with their line ends:
// what the proxy passes on without framing each event, on a real server.
func wantRuns(t *testing.T, path, lineEnd string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := []byte(`,"sse":true}` + "\n")
	i := bytes.Index(b, head)
	if i < 0 {
		t.Errorf("%s holds no run of events: the server's events went one by one", path)
		return
	}
	rest := b[i+len(head):]
	if j := bytes.Index(rest, []byte(lineEnd+lineEnd)); j < 0 || bytes.IndexByte(rest[:j], '{') < 0 {
		t.Errorf("%s: the first run does not hold an event ending in %q: %.200q", path, lineEnd+lineEnd, rest)
	}
}

// wantJudgedAgain judges the run's stored transcripts again, offline, as
// mcpchaos judge does, and wants every scenario's live verdict: what the
// proxy stored of the server's events, most of them as they came after a
// line (transcript formats 3 and 4), reads back as what it saw.
func wantJudgedAgain(t *testing.T, report *reports.Report) {
	t.Helper()
	type verdict struct {
		Outcome  string
		Findings []reports.Finding
		Notes    []string
	}
	verdicts := func(r *reports.Report) map[string]verdict {
		out := map[string]verdict{}
		results := r.Scenarios
		if r.Baseline != nil {
			results = append([]reports.ScenarioResult{*r.Baseline}, results...)
		}
		for _, sc := range results {
			v := verdict{Outcome: sc.Outcome, Notes: sc.Notes}
			for _, f := range r.Findings {
				if f.Scenario == sc.Name {
					v.Findings = append(v.Findings, f)
				}
			}
			out[sc.Name] = v
		}
		return out
	}
	var paths []string
	if report.Baseline != nil {
		paths = append(paths, report.Baseline.Transcript)
	}
	for _, sc := range report.Scenarios {
		if len(sc.Transcripts) > 0 {
			// A scenario of several sessions: every session's record.
			paths = append(paths, sc.Transcripts...)
			continue
		}
		paths = append(paths, sc.Transcript)
	}
	again, err := suite.Rejudge(paths, report.Tool)
	if err != nil {
		t.Fatal(err)
	}
	live, offline := verdicts(report), verdicts(again)
	// The baseline's notes add what the probe itself saw (tools it did
	// not call, tools that answered its arguments with an error), which
	// no transcript holds: the judge's notes must be among them.
	if b, ok := live[faults.Baseline.Name]; ok {
		for _, n := range offline[faults.Baseline.Name].Notes {
			if !slices.Contains(b.Notes, n) {
				t.Errorf("the baseline judged again notes %q, which the live run did not", n)
			}
		}
		b.Notes = offline[faults.Baseline.Name].Notes
		live[faults.Baseline.Name] = b
	}
	// The repro line is the live run's own; the rest must be the same.
	ignoreRepro := cmpopts.IgnoreFields(reports.Finding{}, "Repro")
	if diff := cmp.Diff(live, offline, ignoreRepro, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("judged again (-live +offline):\n%s", diff)
	}
}

// wantUnknownSession400 checks what unknown-session finds, where it finds
// anything: the warning for a 400 to a session id the server never issued,
// not an error. server-everything and Notion's server look the id up in
// their own map of transports and answer "Bad Request: No valid session ID
// provided" when it is not there, for an unknown id as for a missing one
// (the TypeScript SDK's own examples, in 1.32.2, answer an unknown id 404
// "Session not found"); Brave's hands the request to a new transport,
// which answers "Bad Request: Server not initialized".
func wantUnknownSession400(t *testing.T, report *reports.Report, summary string) {
	t.Helper()
	for _, f := range report.Findings {
		if f.Scenario != "unknown-session" {
			continue
		}
		if f.Rule != reports.RuleUnknownSessionNot404 || f.Severity != reports.SeverityWarning || !strings.Contains(f.Message, "with 400, not 404") {
			t.Errorf("unknown-session: %s %s: %s\n%s", f.Severity, f.Rule, f.Message, summary)
		}
	}
}

// tsServerExample is the path of a server example of the pinned TypeScript
// SDK, which examples/typescript/install.sh installs.
func tsServerExample(corpus, name string) string {
	return filepath.Join(corpus, "..", "examples/typescript/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server", name)
}

// The go-sdk v1.8.0 everything example's elicit (form) tool reads the
// elicitation's content with an unchecked type assertion; a client that
// declines (a result of {"action":"decline"}, which has no content, as the
// specification allows) makes it panic, and the panic, in a handler
// goroutine the SDK does not recover, kills the server. The calls in
// flight then are lost; nothing sent after is owed, since nothing listens.
func TestGoSDKExampleCrashesOnADeclinedElicitation(t *testing.T) {
	dir := corpusDir(t)
	port := freePort(t)
	u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	report, err := suite.Run(ctx, suite.Options{
		Command:   []string{filepath.Join(dir, "go-sdk/bin/everything"), "-http", fmt.Sprintf("127.0.0.1:%d", port)},
		URL:       u,
		Scenarios: []faults.Scenario{},
		Seed:      1,
		Deadline:  5 * time.Second,
		Probe:     probe.Config{Calls: []probe.Call{{Tool: "elicit (form)", Args: json.RawMessage(`{}`)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []found{
		{"baseline", reports.KindCrash, "go:panic"},
		{"baseline", reports.KindLostResponse, ""},
	}
	wantFindings(t, report, want)
	wantSaid(t, report, reports.KindCrash, "interface conversion: interface {} is nil, not string")
	// Once the server has died the probe ends: the calls it had in flight
	// are lost, and waiting out their 5 s deadline would tell nothing.
	if report.Baseline == nil || report.Baseline.DurationMS >= 5000 {
		t.Errorf("baseline %+v: the probe waited out its deadline after the server died", report.Baseline)
	}
}

// notion-mcp-server 2.5.2 behind its bearer token, probed without one:
// it refuses the handshake with 401, and the set-up error says to send
// credentials with --header.
func TestNotionWithoutItsTokenIsToldToUseHeader(t *testing.T) {
	dir := corpusDir(t)
	port := freePort(t)
	u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := suite.Run(ctx, suite.Options{
		Command: []string{"env", "NOTION_TOKEN=mcpchaos-no-token", "node",
			filepath.Join(dir, "npm/node_modules/@notionhq/notion-mcp-server/bin/cli.mjs"),
			"--transport", "http", "--port", fmt.Sprint(port), "--auth-token", "mcpchaos-secret"},
		URL: u, Scenarios: []faults.Scenario{}, Seed: 1, Deadline: 5 * time.Second,
	})
	const want = "it refused the handshake with HTTP 401 Unauthorized: it wants credentials; send them with --header"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant one saying %q", err, want)
	}
}

// kindsOf is a copy of r whose findings are one of each scenario and kind.
// withoutMaybe is r without the findings that may come or not.
func withoutMaybe(r *reports.Report, may []found) *reports.Report {
	c := *r
	c.Findings = slices.DeleteFunc(slices.Clone(r.Findings), func(f reports.Finding) bool {
		return slices.Contains(may, found{f.Scenario, f.Kind, f.Signature})
	})
	return &c
}

func kindsOf(r *reports.Report) *reports.Report {
	c := *r
	c.Findings = nil
	seen := map[found]bool{}
	for _, f := range r.Findings {
		k := found{f.Scenario, f.Kind, f.Signature}
		if !seen[k] {
			seen[k] = true
			c.Findings = append(c.Findings, f)
		}
	}
	return &c
}
