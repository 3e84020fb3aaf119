package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// transcriptCalls are the tool calls the probe sent in a transcript, each
// as NAME=ARGUMENTS (compact JSON), in the order the relay received them.
func transcriptCalls(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []string
	err = wire.ReadTranscript(f, func(e wire.Event) error {
		if e.Type != wire.EventReceived || e.Dir != wire.ToServer.String() || e.Method != "tools/call" {
			return nil
		}
		var req struct {
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(e.Raw), &req); err != nil {
			return err
		}
		var args bytes.Buffer
		if err := json.Compact(&args, req.Params.Arguments); err != nil {
			return err
		}
		calls = append(calls, req.Params.Name+"="+args.String())
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return calls
}

// A case saved from a run with --call and --skip-tool records them, and
// --cases without those flags replays the case with the very calls the run
// made: the planted crash still fails the same way, and the replay's
// transcript holds the recorded calls, not the default workload (every
// tool, arguments from its schema: echo, and slow with ms 300). Given
// again, --call replaces the recorded calls.
func TestSaveCaseReplaysItsCalls(t *testing.T) {
	buggy := crashServer(t)
	dir := t.TempDir()
	cases, saved, replayed, overridden := filepath.Join(dir, "cases"), filepath.Join(dir, "saved"), filepath.Join(dir, "replayed"), filepath.Join(dir, "overridden")
	var stdout, stderr bytes.Buffer
	// echo is called and skipped: only a replay that keeps both the calls
	// and the skip makes the calls the saving run made.
	args := []string{"test", "--seed", "3", "--deadline", "2s", "--scenario", "eof-inflight", "--save-case", cases, "--transcript-dir", saved,
		"--call", `slow={"ms": 450}`, "--call", `echo={"text":"case-marker"}`, "--skip-tool", "echo", "--", buggy}
	if code := run(args, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1 (the planted bug)\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	// The repro line of the failing run makes the same calls too.
	if want := "  repro: mcpchaos test --scenario eof-inflight --seed 3 --deadline 2s --call 'slow={\"ms\": 450}' --call 'echo={\"text\":\"case-marker\"}' --skip-tool echo -- " + buggy + "\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout lacks the repro line %q:\n%s", want, stdout.String())
	}
	file := filepath.Join(cases, "eof-inflight-seed3.yaml")
	c, err := faults.ReadCaseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []faults.ToolCall{{Tool: "slow", Arguments: `{"ms": 450}`}, {Tool: "echo", Arguments: `{"text":"case-marker"}`}}
	if diff := cmp.Diff(wantCalls, c.Calls); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"echo"}, c.SkipTools); diff != "" {
		t.Errorf("recorded skipped tools (-want +got):\n%s", diff)
	}
	made := transcriptCalls(t, filepath.Join(saved, "eof-inflight.jsonl"))
	if diff := cmp.Diff([]string{`slow={"ms":450}`, `slow={"ms":450}`, `slow={"ms":450}`}, made); diff != "" {
		t.Fatalf("the saving run's calls (-want +got):\n%s", diff)
	}

	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"test", "--deadline", "2s", "--cases", cases, "--transcript-dir", replayed}, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("replay: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if want := "STILL FAILS  " + file + ": the same way (crash)\n"; !strings.HasSuffix(stdout.String(), want) {
		t.Errorf("replay: stdout does not end in %q:\n%s", want, stdout.String())
	}
	if want := "\nagainst " + buggy + `, calling 'slow={"ms": 450}' 'echo={"text":"case-marker"}', skipping echo:` + "\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("replay: stdout does not name the workload %q:\n%s", want, stdout.String())
	}
	if diff := cmp.Diff(made, transcriptCalls(t, filepath.Join(replayed, "eof-inflight-seed3.jsonl"))); diff != "" {
		t.Errorf("the replay's calls differ from the saving run's (-saved +replayed):\n%s", diff)
	}
	// After the calls, the two the probe makes to see them refused: a tool
	// the server does not list, and arguments the schema of a tool among
	// the calls refuses.
	if diff := cmp.Diff([]string{`slow={"ms":450}`, "mcpchaos-no-such-tool={}", `slow={"ms":"mcpchaos"}`}, dedupe(transcriptCalls(t, filepath.Join(replayed, "baseline.jsonl")))); diff != "" {
		t.Errorf("the replay's baseline calls (-want +got):\n%s", diff)
	}

	// --call replaces the recorded calls; the recorded skip stays.
	stdout.Reset()
	stderr.Reset()
	args = []string{"test", "--deadline", "2s", "--cases", cases, "--transcript-dir", overridden, "--call", `slow={"ms":360}`, "--call", `echo={"text":"x"}`}
	if code := run(args, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("override: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if want := "mcpchaos test: --call replaces what each case recorded; the replay may not recreate the recorded runs\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("override: stdout does not say %q:\n%s", want, stdout.String())
	}
	if want := "  repro: mcpchaos test --cases " + cases + " --call 'slow={\"ms\":360}' --call 'echo={\"text\":\"x\"}'\n"; !strings.Contains(stdout.String(), want) {
		t.Errorf("override: stdout lacks the repro line %q:\n%s", want, stdout.String())
	}
	if diff := cmp.Diff([]string{`slow={"ms":360}`}, dedupe(refusedCallsLeftOut(transcriptCalls(t, filepath.Join(overridden, "eof-inflight-seed3.jsonl"))))); diff != "" {
		t.Errorf("override: calls (-want +got):\n%s", diff)
	}
}

// refusedCallsLeftOut drops the calls the probe makes to see them refused.
func refusedCallsLeftOut(calls []string) []string {
	var out []string
	for _, c := range calls {
		if !strings.HasPrefix(c, "mcpchaos-no-such-tool=") && !strings.Contains(c, `"mcpchaos"}`) {
			out = append(out, c)
		}
	}
	return out
}

// dedupe drops repeats, keeping the first of each.
func dedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// A case of test-client has no probe workload: calls: in one is refused
// with the file and line, before anything runs.
func TestClientCaseWithCallsRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.yaml")
	body := "version: 1\nscenario: {name: a, faults: [eof]}\nseed: 1\ncommand: [client]\nserver: [srv]\nfindings: []\ncalls: [{tool: echo, arguments: '{}'}]\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"test-client", "--cases", dir}, nil, &stdout, &stderr); code != exitUsage {
		t.Errorf("exit %d, want %d\nstderr:\n%s", code, exitUsage, stderr.String())
	}
	want := file + ":7: calls: a case of test-client has no probe workload: its client program makes the calls; remove calls:"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q, want it to contain %q", stderr.String(), want)
	}
}
