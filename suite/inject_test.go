package suite

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The injection faults against the bundled mcp-go client program
// (examples/cmd/client) and the bundled mcp-go server (mcpchaos serve), run
// as mcpchaos test-client runs them: the client is judged, and must come
// through every one clean. Each scenario's transcript shows that the fault
// did what it says, so a clean verdict cannot come from a fault that never
// fired.

// injectScenario is a scenario and what its transcript must show: the fault
// decisions, and each frame injected with what became of its answer.
type injectScenario struct {
	sc        faults.Scenario
	decisions []string
	injected  []string
	// notes are the scenario's indeterminate notes; with none it must pass.
	notes []string
}

func TestInjectionFaultsAgainstTheMCPGoClient(t *testing.T) {
	client := filepath.Join(t.TempDir(), "client")
	if out, err := exec.Command("go", "build", "-o", client, "github.com/mcpchaos/mcpchaos/examples/cmd/client").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	serverRequest := func(method string) injectScenario {
		return injectScenario{
			sc:        faults.Scenario{Name: "server-request-" + strings.ReplaceAll(method, "/", "-"), Faults: []string{"server-request:method=" + method}, Expect: "success"},
			decisions: []string{`server-request#1: inject ` + method + ` (id "mcpchaos-inject-1") toward the client`},
			injected:  []string{`s2c request ` + method + ` "mcpchaos-inject-1", answered c2s: the answer to a request injected by fault server-request#1`},
		}
	}
	stateful := []injectScenario{
		serverRequest("roots/list"),
		serverRequest("sampling/createMessage"),
		serverRequest("elicitation/create"),
		serverRequest("ping"),
		{
			sc:        faults.Scenario{Name: "list-changed-all", Faults: []string{"list-changed:list=all"}, Expect: "success"},
			decisions: []string{"list-changed#1: inject notifications/{tools,prompts,resources}/list_changed toward the client"},
			injected: []string{
				"s2c notification notifications/tools/list_changed",
				"s2c notification notifications/prompts/list_changed",
				"s2c notification notifications/resources/list_changed",
			},
		},
		{
			sc:        faults.Scenario{Name: "early-request", Faults: []string{"early-request"}, Expect: "success"},
			decisions: []string{`early-request#1: inject tools/list (id "mcpchaos-inject-1") toward the server`},
			injected:  []string{`c2s request tools/list "mcpchaos-inject-1", answered s2c: the answer to a request injected by fault early-request#1`},
		},
		{
			sc:        faults.Scenario{Name: "cancel-before-response", Faults: []string{"cancel:on=s2c:response:tools/call,position=before"}, Expect: "success"},
			decisions: []string{"cancel#1: cancel tools/call (id 3) toward the server"},
			injected:  []string{"c2s notification notifications/cancelled"},
		},
	}
	stateless := []injectScenario{
		{
			// A skipped firing does not use up times=1: each of the three
			// calls is skipped, and the verdict gives the reason.
			sc:        faults.Scenario{Name: "server-request-stateless", Faults: []string{"server-request"}, Expect: "success"},
			decisions: repeat("server-request#1: skipped: the client speaks the stateless 2026-07-28 protocol, which has no server-to-client requests", 3),
			notes:     []string{"no fault fired: server-request#1 skipped: the client speaks the stateless 2026-07-28 protocol, which has no server-to-client requests"},
		},
		{
			sc:        faults.Scenario{Name: "list-changed-stateless", Faults: []string{"list-changed"}, Expect: "success"},
			decisions: []string{"list-changed#1: inject notifications/tools/list_changed toward the client"},
			injected:  []string{"s2c notification notifications/tools/list_changed"},
		},
	}
	for _, tc := range []struct {
		name      string
		args      []string
		scenarios []injectScenario
	}{
		{"handshake", []string{"--protocol", "2025-11-25"}, stateful},
		{"stateless", nil, stateless},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var scs []faults.Scenario
			for _, s := range tc.scenarios {
				scs = append(scs, s.sc)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			report, err := RunClient(ctx, ClientOptions{
				Client: append([]string{client, "--timeout", "60s"}, tc.args...), Server: []string{mcpchaosBin, "serve"}, Self: []string{mcpchaosBin},
				Scenarios: scs, Seed: 1, Deadline: 10 * time.Second, Grace: 2 * time.Second, Parallel: 4, TranscriptDir: dir,
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]found(nil), summarize(report.Findings)); diff != "" {
				var b strings.Builder
				reports.WriteSummary(&b, report)
				t.Errorf("findings (-want +got):\n%s\n%s", diff, b.String())
			}
			outcomes := map[string]reports.ScenarioResult{}
			for _, r := range report.Scenarios {
				outcomes[r.Name] = r
			}
			for _, s := range tc.scenarios {
				r := outcomes[s.sc.Name]
				want := "pass"
				if len(s.notes) > 0 {
					want = "indeterminate"
				}
				if r.Outcome != want || !cmp.Equal(s.notes, r.Indeterminate) {
					t.Errorf("scenario %s: outcome %s, indeterminate %q; want %s, %q", s.sc.Name, r.Outcome, r.Indeterminate, want, s.notes)
				}
				events, err := readTranscriptFile(filepath.Join(dir, s.sc.Name+".jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				var decisions []string
				for _, e := range events {
					if e.Type == wire.EventFault {
						decisions = append(decisions, e.Fault+": "+e.Detail)
					}
				}
				if diff := cmp.Diff(s.decisions, decisions); diff != "" {
					t.Errorf("%s: fault decisions (-want +got):\n%s", s.sc.Name, diff)
				}
				if diff := cmp.Diff(s.injected, injectedFates(events)); diff != "" {
					t.Errorf("%s: injected frames (-want +got):\n%s", s.sc.Name, diff)
				}
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// injectedFates lists each injected frame and, for a request, how its
// answer came back and that the relay swallowed it.
func injectedFates(events []wire.Event) []string {
	var out []string
	for _, inj := range events {
		if inj.Type != wire.EventInjected {
			continue
		}
		s := strings.TrimSpace(inj.Dir + " " + inj.Kind + " " + inj.Method + " " + inj.ID)
		if inj.Kind == "request" {
			s += ", unanswered"
			for _, a := range events {
				if a.Type != wire.EventReceived || a.ID != inj.ID || (a.Kind != "response" && a.Kind != "error") {
					continue
				}
				s = strings.TrimSuffix(s, ", unanswered") + ", answered " + a.Dir + ": " + fateOf(events, a.Seq)
			}
		}
		out = append(out, s)
	}
	return out
}

// fateOf says what the relay did with the frame received at seq.
func fateOf(events []wire.Event, seq int64) string {
	for _, e := range events {
		if e.Of == seq && (e.Type == wire.EventDropped || e.Type == wire.EventForwarded) {
			if e.Type == wire.EventForwarded {
				return "forwarded to the other peer"
			}
			return e.Detail
		}
	}
	return "neither forwarded nor dropped"
}
