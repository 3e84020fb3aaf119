package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The GitHub Action (action.yml) runs its shell steps as a runner would:
// with the inputs in the environment, RUNNER_TEMP, GITHUB_OUTPUT and
// GITHUB_STEP_SUMMARY, and "mcpchaos" in RUNNER_TEMP as its build step
// leaves it. A planted crash fails the job with the annotation, the job
// summary and the reports written; with the crash in a baseline, it passes.
func TestGitHubActionSteps(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Runs struct {
			Steps []struct {
				ID, Name, Run string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &action); err != nil {
		t.Fatal(err)
	}
	steps := map[string]string{}
	for _, s := range action.Runs.Steps {
		if s.ID != "" {
			steps[s.ID] = s.Run
		} else if s.Run != "" {
			steps[s.Name] = s.Run
		}
	}
	runScript, failScript := steps["run"], steps["Fail on findings"]
	if runScript == "" || failScript == "" {
		t.Fatalf("action.yml has no run step or no failing step: %q", steps)
	}
	bin := crashServer(t)
	for _, tc := range []struct {
		name, args string
		outcome    string
		exit       int
		annotation string
	}{
		{"a crash", "--seed 3 --deadline 2s --scenario eof-inflight", "fail", 1, "::error title=mcpchaos crash go%3Apanic in eof-inflight::"},
		{"a known crash", "--seed 3 --deadline 2s --scenario eof-inflight --baseline " + filepath.Join("..", "..", "examples", "ci", "crash-baseline.yaml"), "pass", 0, "::warning title=mcpchaos crash go%3Apanic in eof-inflight::"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			// The build step's binary: this test binary, run as mcpchaos.
			wrapper := "#!/bin/sh\nMCPCHAOS_TEST_MAIN=1 GORACE=atexit_sleep_ms=0 exec " + os.Args[0] + " \"$@\"\n"
			if err := os.WriteFile(filepath.Join(tmp, "mcpchaos"), []byte(wrapper), 0o755); err != nil {
				t.Fatal(err)
			}
			output, summary := filepath.Join(tmp, "output"), filepath.Join(tmp, "summary.md")
			env := append(os.Environ(), "RUNNER_TEMP="+tmp, "GITHUB_OUTPUT="+output, "GITHUB_STEP_SUMMARY="+summary,
				"MCPCHAOS_COMMAND=test", "MCPCHAOS_TARGET="+bin, "MCPCHAOS_ARGS="+tc.args)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-e", "-c", runScript)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the run step failed: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.annotation) {
				t.Errorf("no annotation %q in the step's output:\n%s", tc.annotation, out)
			}
			outputs, _ := os.ReadFile(output)
			if !strings.Contains(string(outputs), "outcome="+tc.outcome+"\n") || !strings.Contains(string(outputs), "report="+filepath.Join(tmp, "mcpchaos-report", "report.json")) {
				t.Errorf("step outputs:\n%s", outputs)
			}
			if s, _ := os.ReadFile(summary); !strings.HasPrefix(string(s), "## mcpchaos: ") {
				t.Errorf("job summary:\n%s", s)
			}
			for _, f := range []string{"report.json", "junit.xml", "summary.md"} {
				if _, err := os.Stat(filepath.Join(tmp, "mcpchaos-report", f)); err != nil {
					t.Errorf("the reports to upload: %v", err)
				}
			}
			fail := exec.CommandContext(ctx, "bash", "-e", "-c", failScript)
			fail.Env = env
			err = fail.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != tc.exit {
				t.Errorf("the job's last step exits %d, want %d", code, tc.exit)
			}
		})
	}
}
