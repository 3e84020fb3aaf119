package suite

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
)

// Issue 31, bad input: a stdio server that locks a file, so that a second
// one started beside it exits at once (as a server over an SQLite file or a
// single-instance lock does). Side by side, whichever run loses the race
// cannot open its session; the matrix notices, runs one at a time, and
// reports the bundled server clean, as it is, rather than set-up errors or
// findings that concurrency made.
func TestMatrixOfAServerOfOneSession(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) is not installed")
	}
	lock := filepath.Join(t.TempDir(), "server.lock")
	server := []string{"sh", "-c", `exec 9>"$0"; flock -n 9 || { echo "another server holds $0" >&2; exit 1; }; exec "$1" serve`, lock, mcpchaosBin}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	report, err := Run(ctx, Options{Command: server, Scenarios: faults.ServerScenarios(), Seed: 1, Deadline: 5 * time.Second, Parallel: 4})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(report.Findings) > 0 {
		t.Errorf("findings on a clean server: %+v", report.Findings)
	}
	if !slices.ContainsFunc(report.Baseline.Notes, func(n string) bool { return strings.Contains(n, "one session at a time") }) {
		t.Errorf("the baseline's notes do not say the target takes one session at a time: %q", report.Baseline.Notes)
	}
	if got, want := len(report.Scenarios), len(faults.ServerScenarios()); got != want {
		t.Errorf("%d scenarios reported, want %d", got, want)
	}
}
