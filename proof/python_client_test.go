package proof

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/suite"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// mcpchaosBinary builds mcpchaos once: test-client puts its wrap between the
// client program and the server.
func mcpchaosBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcpchaos-proof-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "mcpchaos")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/mcpchaos/mcpchaos/cmd/mcpchaos").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("go build: %s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building mcpchaos: %v", buildErr)
	}
	return binPath
}

// The client rows of issue 4: each client program, on the buggy and on the
// fixed release of its SDK, through one client scenario against the bundled
// server. The buggy release hangs with its receive loop stuck; the fixed one
// passes.
//
//   - python-sdk #594 (mcp 1.5.0, fixed in 1.6.0): the client session pushes
//     every notification into a zero-capacity stream nobody reads, so the
//     first notification (progress before the result) blocks its receive
//     loop for good.
//   - the same #594 at the handshake (log-before-initialize-answer, a
//     scenario of issue 40): three notifications/message before the
//     initialize answer, which a server may send, and mcp 1.5.0's session
//     never reads the answer behind them.
//   - agent-framework #4828 (agent-framework-core 1.3.0, fixed by #4866 in
//     1.4.0): the list_changed handler reloads tools on the SDK's only
//     receive loop and waits for an answer that loop would have to read.
func TestPythonClientBugs_594_and_4866(t *testing.T) {
	root := repoRoot(t)
	bin := mcpchaosBinary(t)
	for _, tc := range []struct {
		name, env, client, scenario string
		want                        []found
	}{
		{"mcp-1.5.0 hangs on progress before the result", "py-mcp-1.5.0", "progress_client.py", "progress-before-response",
			[]found{{"progress-before-response", "hang", ""}}},
		{"mcp-1.6.0 is clean", "py-mcp-1.6.0", "progress_client.py", "progress-before-response", []found{}},
		{"mcp-1.5.0 hangs on log lines before the initialize answer", "py-mcp-1.5.0", "progress_client.py", "log-before-initialize-answer",
			[]found{{"log-before-initialize-answer", "hang", ""}}},
		{"mcp-1.6.0 takes log lines before the initialize answer", "py-mcp-1.6.0", "progress_client.py", "log-before-initialize-answer", []found{}},
		{"agent-framework 1.3.0 deadlocks on list_changed", "py-af-1.3.0", "af_list_changed_client.py", "list-changed-mid-call",
			[]found{{"list-changed-mid-call", "hang", ""}}},
		{"agent-framework 1.4.0 is clean", "py-af-1.4.0", "af_list_changed_client.py", "list-changed-mid-call", []found{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			python := sdkPython(t, root, tc.env)
			scenarios, err := faults.SelectScenarios(append(faults.ClientScenarios(), faults.PresetsFor(faults.ForClient)...), []string{tc.scenario})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			start := time.Now()
			report, err := suite.RunClient(ctx, suite.ClientOptions{
				Client:    []string{python, filepath.Join(root, "examples", "python", "clients", tc.client)},
				Server:    []string{bin, "serve"},
				Self:      []string{bin},
				Scenarios: scenarios,
				Seed:      1,
				Deadline:  10 * time.Second,
				HangAfter: 10 * time.Second, // its receive loop is stuck: no timeout of its own ends it
				Grace:     2 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("verdict after %s: %s", time.Since(start).Round(time.Millisecond), scenarioTimes(report))
			wantFindings(t, report, tc.want)
			wantSaid(t, report, "hang", "receive loop is stuck")
		})
	}
}
