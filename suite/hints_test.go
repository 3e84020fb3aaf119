package suite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
)

// A tool that hangs without faults may only be slow: the baseline's hang
// says which flags to try (issue 9, bad input: a slow tool).
func TestBaselineHangOfAToolSaysWhatToPass(t *testing.T) {
	base := &scenarioRun{verdict: judge.Verdict{Findings: []reports.Finding{
		{Kind: reports.KindHang, Message: "tools/call (id 7) unanswered after 5s; the server answered a liveness ping, so its receive loop runs but the handler is stuck",
			Request: &reports.Request{ID: "7", Method: "tools/call", Tool: "fetch"}},
		{Kind: reports.KindHang, Message: "ping (id 9) unanswered after 5s", Request: &reports.Request{ID: "9", Method: "ping"}},
	}}}
	workloadHints(base, 5*time.Second)
	if got := base.verdict.Findings[0].Message; !strings.HasSuffix(got, "; if fetch is merely slow and sends no progress, give it a --deadline longer than 5s, or leave it out with --skip-tool fetch") {
		t.Errorf("the tool's hang does not say what to pass: %s", got)
	}
	if got := base.verdict.Findings[1].Message; got != "ping (id 9) unanswered after 5s" {
		t.Errorf("a hang that is no tool's got a hint: %s", got)
	}
}

// A fault scenario whose fault never fired ran as the baseline does: a
// tool that hung in it gets the baseline's hint, as
// brave-search-mcp-server's summarizer should have when it outran the
// deadline on a loaded machine under eof-server-request, which never
// fires on a server that sends no request; so does one whose fault fired
// and never landed. Where the fault landed, the hang is the scenario's
// finding and gets none.
func TestScenarioThatNeverFiredHintsAtASlowTool(t *testing.T) {
	const stuck = "tools/call (id 8) unanswered after 5s; the server answered a liveness ping, so its receive loop runs but the handler is stuck"
	const hint = "; if brave_summarizer is merely slow and sends no progress, give it a --deadline longer than 5s, or leave it out with --skip-tool brave_summarizer"
	for _, tc := range []struct {
		name          string
		indeterminate []string
		want          string
	}{
		{"never fired", []string{"no fault fired: the moment this scenario waits for never came (eof:on=s2c:request)"}, stuck + hint},
		{"fired and never landed", []string{"the fault fired but did not land: id-collision#1: the tools/call request (id 3) whose id it took was answered before this request went on to the server"}, stuck + hint},
		{"fired", nil, stuck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &scenarioRun{verdict: judge.Verdict{Findings: []reports.Finding{{Kind: reports.KindHang, Message: stuck,
				Request: &reports.Request{ID: "8", Method: "tools/call", Tool: "brave_summarizer"}}}}}
			r.result.Indeterminate = tc.indeterminate
			scenarioHints(r, 5*time.Second)
			if diff := cmp.Diff(tc.want, r.verdict.Findings[0].Message); diff != "" {
				t.Errorf("the hang's message (-want +got):\n%s", diff)
			}
		})
	}
}

// A tool that answers the generated arguments with a tool error is noted on
// the baseline with what to pass (issue 9, bad input: a tool that needs
// arguments the schema does not describe). The bundled server's ping_client
// cannot ping in the stateless revision and says so with isError.
func TestBaselineNotesToolsThatFailedOnGeneratedArguments(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	report, err := Run(ctx, Options{Command: []string{mcpchaosBin, "serve"}, Scenarios: []faults.Scenario{faults.Baseline}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(report.Baseline.Notes, "\n")
	for _, want := range []string{"1 tool answered the arguments generated from the schema with a tool error", "ping_client (protocol revision 2026-07-28 has no server-to-client requests", "--call NAME=JSON"} {
		if !strings.Contains(notes, want) {
			t.Errorf("baseline notes %q, want them to contain %q", notes, want)
		}
	}
	var b strings.Builder
	reports.WriteSummary(&b, report)
	if !strings.Contains(b.String(), "--call NAME=JSON") {
		t.Errorf("the summary does not show the baseline's note:\n%s", b.String())
	}
}

// The tools the probe left out because they may only be called as tasks,
// and it could not call them so, are named on the baseline, so that a user
// does not read their absence from the calls as mcpchaos missing them.
func TestBaselineNotesTaskOnlyTools(t *testing.T) {
	base := &scenarioRun{probe: &probe.Outcome{TaskOnlyTools: []string{"delay", "collect-user-info-task"}}}
	workloadHints(base, 5*time.Second)
	want := []string{`2 tools not called: the server says they may only be called as tasks (execution.taskSupport "required"), and the probe calls tools as tasks only where the server declares tasks.requests.tools.call, 4 at most: delay, collect-user-info-task`}
	if diff := cmp.Diff(want, base.result.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// The baseline says which of the requests the server's capabilities make
// callable the session sent, and why not the others (issue 29: the probe sent
// 5 of server-everything's 17, and nothing said so).
func TestBaselineNotesCoverage(t *testing.T) {
	base := &scenarioRun{probe: &probe.Outcome{
		Requests: []probe.Request{
			{Method: "tools/call", Tool: "mcpchaos-no-such-tool", Deliberate: probe.DeliberateUnknownTool, Answered: true, Error: "-32602: unknown tool"},
		},
		Coverage: &probe.Coverage{
			Callable:   []string{"ping", "tools/list", "tools/call", "resources/list", "resources/read", "resources/subscribe"},
			Sent:       []string{"ping", "tools/list", "tools/call", "resources/list", "resources/read"},
			NotSent:    []probe.NotSent{{Method: "resources/subscribe", Why: "no resource could be read to subscribe to"}},
			Sampled:    []string{"resources/read: 8 of 412 listed resources, chosen by the seed"},
			Deliberate: []string{probe.DeliberateUnknownTool},
		}}}
	workloadHints(base, 5*time.Second)
	want := []string{"the session sent 5 of the 6 requests the server's capabilities make callable; " +
		"not sent: resources/subscribe (no resource could be read to subscribe to); " +
		"bounded: resources/read: 8 of 412 listed resources, chosen by the seed; " +
		"and 1 request sent to be refused: a tool the server does not list"}
	// The refused call is the answer it asked for: no note of a tool that
	// answered with an error.
	if diff := cmp.Diff(want, base.result.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// A tool answered with a JSON-RPC error was as little exercised as one
// answered with a tool error: notion-mcp-server 2.5.2 answers every call
// whose API request fails with -32603, and the baseline said nothing of it.
// A call that was never answered is no such note: it is the judge's.
func TestBaselineNotesToolsAnsweredWithAJSONRPCError(t *testing.T) {
	base := &scenarioRun{probe: &probe.Outcome{Requests: []probe.Request{
		{Method: "tools/call", Tool: "API-get-user", Answered: true, Error: "-32603: getaddrinfo ENOTFOUND api.notion.com"},
		{Method: "tools/call", Tool: "API-get-user", Answered: true, Error: "-32603: again"},
		{Method: "tools/call", Tool: "search", Answered: true, ToolError: "no key"},
		{Method: "tools/call", Tool: "slow", Error: "no answer within 5s"},
		{Method: "resources/read", Answered: true, Error: "-32002: Resource not found"},
	}}}
	workloadHints(base, 5*time.Second)
	want := []string{
		"1 tool answered the arguments generated from the schema with a tool error (an answer, not a finding; where the arguments were the trouble, pass real ones with --call NAME=JSON): search (no key)",
		"1 tool answered the arguments generated from the schema with a JSON-RPC error (an answer, not a finding; where the arguments were the trouble, pass real ones with --call NAME=JSON): API-get-user (-32603: getaddrinfo ENOTFOUND api.notion.com)",
	}
	if diff := cmp.Diff(want, base.result.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}
