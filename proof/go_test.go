package proof

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// Row 4 for Go: the current mcp-go release, as the bundled server (mcpchaos
// serve) through the server matrix and as the example client through the
// client matrix. Both come through clean; a finding here is news.
func TestMCPGo(t *testing.T) {
	bin := mcpchaosBinary(t)
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		report, err := suite.Run(ctx, suite.Options{
			Command: []string{bin, "serve"}, Scenarios: faults.ServerScenarios(),
			Seed: 1, Deadline: 5 * time.Second, Grace: 2 * time.Second, Parallel: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		expectClean(t, report)
	})
	t.Run("client", func(t *testing.T) {
		t.Parallel()
		client := filepath.Join(t.TempDir(), "client")
		if out, err := exec.Command("go", "build", "-o", client, "github.com/mcpchaos/mcpchaos/examples/cmd/client").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		report, err := suite.RunClient(ctx, suite.ClientOptions{
			Client: []string{client, "--timeout", "60s"}, Server: []string{bin, "serve"}, Self: []string{bin},
			Scenarios: faults.ClientScenarios(), Seed: 1, Deadline: 10 * time.Second, Grace: 2 * time.Second, Parallel: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		expectClean(t, report)
	})
}

func expectClean(t *testing.T, report *reports.Report) {
	t.Helper()
	t.Logf("%s", scenarioTimes(report))
	wantFindings(t, report, []found{})
}
