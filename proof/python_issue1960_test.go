package proof

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/suite"
)

// python-sdk #1960 (open; the v1.x fix #2449 is unreleased, mcp 1.30.0
// still has it): stdio_client's stdout_reader forwards each frame into a
// zero-capacity stream, and when the client closes its session while a frame
// is still coming (one more progress after the result, a result answered
// twice) the reader's send meets the closed stream: BrokenResourceError in
// an ExceptionGroup, and the client program exits 1 although its call
// succeeded. Found by the late-progress and duplicate-response presets; the
// TypeScript SDK's client comes through both clean.
func TestPythonClientBug_1960(t *testing.T) {
	root := repoRoot(t)
	bin := mcpchaosBinary(t)
	python := sdkPython(t, root, "py-mcp-1.27.0")
	scenarios, err := faults.SelectScenarios(faults.PresetsFor(faults.ForClient), []string{"late-progress", "duplicate-response"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	report, err := suite.RunClient(ctx, suite.ClientOptions{
		Client:    []string{python, filepath.Join(root, "examples", "python", "clients", "progress_client.py")},
		Server:    []string{bin, "serve"},
		Self:      []string{bin},
		Scenarios: scenarios,
		Seed:      1,
		Deadline:  10 * time.Second,
		Grace:     2 * time.Second,
		Parallel:  2,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("verdict after %s: %s", time.Since(start).Round(time.Millisecond), scenarioTimes(report))
	want := []found{
		{"duplicate-response", "crash", "python:BrokenResourceError"},
		{"late-progress", "crash", "python:BrokenResourceError"},
	}
	wantFindings(t, report, want)
	for _, f := range report.Findings {
		if len(f.Evidence) == 0 || !strings.Contains(f.Evidence[0].Excerpt, "stdout_reader") {
			t.Errorf("%s: the crash's traceback does not go through stdio_client's stdout_reader (#1960)", f.Scenario)
		}
	}
}
