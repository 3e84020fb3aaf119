package suite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// The built-in client scenarios beyond the default matrix find nothing wrong
// with the bundled mcp-go client program, in either era: a preset that did
// would be a false alarm for every user. The stateless era has no
// server-to-client requests, so server-request-mid-call never fires there.
func TestExtraClientPresetsPassWithTheMCPGoClient(t *testing.T) {
	client := filepath.Join(t.TempDir(), "client")
	if out, err := exec.Command("go", "build", "-o", client, "github.com/mcpchaos/mcpchaos/examples/cmd/client").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var extra []faults.Scenario
	for _, p := range faults.Presets() {
		if p.For == faults.ForClient && !p.Default {
			extra = append(extra, p.Scenario)
		}
	}
	if len(extra) == 0 {
		t.Skip("no extra client presets")
	}
	for _, tc := range []struct {
		name   string
		args   []string
		indets map[string]string
	}{
		// The example client runs no task.
		{"handshake", []string{"--protocol", "2025-11-25"}, map[string]string{"task-status-dropped": "no fault fired"}},
		// Nor, without a handshake, the initialize answer the handshake
		// presets wait for.
		{"stateless", nil, map[string]string{"server-request-mid-call": "no fault fired", "task-status-dropped": "no fault fired",
			"ping-before-initialize-answer": "no fault fired", "log-before-initialize-answer": "no fault fired"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			report, err := RunClient(ctx, ClientOptions{
				Client: append([]string{client, "--timeout", "60s"}, tc.args...), Server: []string{mcpchaosBin, "serve"}, Self: []string{mcpchaosBin},
				Scenarios: extra, Seed: 1, Deadline: 15 * time.Second, Grace: 2 * time.Second, Parallel: 4,
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]found(nil), summarize(report.Findings)); diff != "" {
				var b strings.Builder
				reports.WriteSummary(&b, report)
				t.Errorf("findings (-want +got):\n%s\n%s", diff, b.String())
			}
			for _, r := range report.Scenarios {
				want, indet := tc.indets[r.Name]
				switch {
				case indet && (r.Outcome != reports.OutcomeIndeterminate || len(r.Indeterminate) == 0 || !strings.Contains(r.Indeterminate[0], want)):
					t.Errorf("%s: outcome %s %q, want indeterminate: %s", r.Name, r.Outcome, r.Indeterminate, want)
				case !indet && r.Outcome != reports.OutcomePass:
					t.Errorf("%s: outcome %s %q, want pass", r.Name, r.Outcome, r.Indeterminate)
				}
			}
		})
	}
}

// linger-on-close catches the bug it names (issue 9): a client that closes
// its server's stdin and then waits for it for ever hangs on a server that
// ignores EOF and SIGTERM. (The mcp-go client, which escalates to SIGKILL,
// passes it above.) With a linger that ends by itself, this client passed.
func TestLingerOnCloseCatchesAClientThatWaitsForEver(t *testing.T) {
	var linger []faults.Scenario
	for _, sc := range faults.PresetsFor(faults.ForClient) {
		if sc.Name == "linger-on-close" {
			linger = append(linger, sc)
		}
	}
	if len(linger) != 1 {
		t.Fatalf("no linger-on-close preset")
	}
	// The test client program closes the server's stdin and then waits for
	// it to exit, with no escalation. Its deadline is longer than the 5s the
	// preset used to linger, which this client outwaited.
	t.Setenv(clientModeEnv, "plain")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	report, err := RunClient(ctx, ClientOptions{
		Client: []string{os.Args[0]}, Server: []string{mcpchaosBin, "serve"}, Self: []string{mcpchaosBin},
		Scenarios: linger, Seed: 1, Deadline: 8 * time.Second, HangAfter: 8 * time.Second, Grace: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	reports.WriteSummary(&b, report)
	if diff := cmp.Diff([]found{{"linger-on-close", "hang", ""}}, summarize(report.Findings)); diff != "" {
		t.Fatalf("findings (-want +got):\n%s\n%s", diff, b.String())
	}
	if msg := report.Findings[0].Message; !strings.Contains(msg, "must escalate") {
		t.Errorf("the hang does not say the client must escalate: %s", msg)
	}
}
