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
		{"handshake", []string{"--protocol", "2025-11-25"}, nil},
		{"stateless", nil, map[string]string{"server-request-mid-call": "no fault fired"}},
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
