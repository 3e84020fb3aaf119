package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/suite"
)

const scenarioFile = `version: 1
scenarios:
  - name: echo-burst
    doc: two progress notifications before the echo
    faults:
      - burst:on=c2s:request,dir=s2c,count=2
    seed: 42
    deadline: 3s
  - name: pinned-eof
    faults:
      - eof:on=c2s:request:tools/call,inflight=3
    seed: 11
  - name: with-workload
    faults: [eof]
    workload: {calls: 2}
`

func writeScenarioFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chaos.yaml")
	if err := os.WriteFile(path, []byte(scenarioFile), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wrap --scenario FILE#NAME injects that scenario's faults with its seed and
// deadline, records its name, and --fault adds to them.
func TestWrapScenarioFromFile(t *testing.T) {
	file := writeScenarioFile(t)
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	args := append([]string{"wrap", "--scenario", file + "#echo-burst", "--fault", "delay:for=1ms", "--transcript", transcript, "--"}, catServer(t)...)
	var stdout, stderr bytes.Buffer
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":7}}}` + "\n"
	if code := run(args, strings.NewReader(in), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "seed 42, 2 fault(s)") {
		t.Errorf("the scenario's seed and faults are not used: %q", stderr.String())
	}
	if n := strings.Count(stdout.String(), "notifications/progress"); n != 2 {
		t.Errorf("%d progress notifications reached the client, want the scenario's 2:\n%s", n, stdout.String())
	}
	ev := readTranscript(t, transcript)[0]
	got := struct {
		Seed     uint64
		Scenario string
		Faults   []string
		Repro    string
	}{*ev.Seed, ev.Scenario, ev.Faults, ev.Repro}
	want := got
	want.Seed, want.Scenario = 42, "echo-burst"
	want.Faults = []string{"burst:on=c2s:request,dir=s2c,count=2", "delay:for=1ms"}
	want.Repro = suite.ShellQuote(append([]string{"mcpchaos", "wrap", "--seed", "42", "--scenario", file + "#echo-burst", "--fault", "delay:for=1ms", "--"}, catServer(t)...))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session event (-want +got):\n%s", diff)
	}
}

func TestScenarioUsageErrors(t *testing.T) {
	file := writeScenarioFile(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("version: 1\nscenarios:\n  - name: a\n    faults: [stal]\n"), 0o644)
	client := filepath.Join(t.TempDir(), "client.yaml")
	os.WriteFile(client, []byte("version: 1\nscenarios:\n  - name: c\n    faults: [eof]\n    expect: failure\n"), 0o644)
	checkUsageErrors(t, []usageCase{
		{"wrap: a file of several scenarios", []string{"wrap", "--scenario", file, "--", "cat"},
			"wrap: --scenario " + file + ": the file has 3 scenarios and one session runs one; pick it with " + file + "#NAME, NAME one of: echo-burst, pinned-eof, with-workload"},
		{"wrap: two scenarios", []string{"wrap", "--scenario", "stall-s2c", "--scenario", "burst-c2s", "--", "cat"}, "--scenario given 2 times; one session runs one scenario"},
		{"wrap: workload", []string{"wrap", "--scenario", file + "#with-workload", "--", "cat"}, "scenario with-workload: workload: shapes the probe client of mcpchaos test"},
		{"wrap: unknown name in the file", []string{"wrap", "--scenario", file + "#echo", "--", "cat"}, `has no scenario "echo"`},
		{"wrap: a bad file", []string{"wrap", "--scenario", bad, "--", "cat"}, bad + `:4: scenarios[0].faults[0]: fault "stal": unknown fault "stal" (did you mean "stall"?)`},
		{"test: a bad file", []string{"test", "--scenario", bad, "--", "cat"}, bad + ":4: scenarios[0].faults[0]"},
		{"test: expect", []string{"test", "--scenario", client, "--", "cat"}, "scenario c (" + client + ":3): expect: failure says what a client program must do"},
		{"test-client: workload", []string{"test-client", "--scenario", file + "#with-workload", "--", "cat"}, "scenario with-workload (" + file + ":13): workload: shapes the probe client of mcpchaos test"},
		{"test-client: a server preset", []string{"test-client", "--scenario", "stall-s2c", "--", "cat"}, `unknown scenario "stall-s2c"`},
	})
}

// test --scenario FILE#NAME runs that scenario with its own seed, and the
// repro line selects it again.
func TestTestScenarioFromFile(t *testing.T) {
	file := writeScenarioFile(t)
	dir := t.TempDir()
	reportPath := filepath.Join(dir, "report.json")
	var stdout, stderr bytes.Buffer
	args := append([]string{"test", "--seed", "5", "--deadline", "2s", "--scenario", file + "#pinned-eof", "--scenario", "burst-c2s", "--report", reportPath, "--"}, selfServe(t)...)
	if code := run(args, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	report := readReportFile(t, reportPath)
	type row struct {
		Name    string
		Seed    uint64
		Outcome string
	}
	var got []row
	for _, s := range report.Scenarios {
		got = append(got, row{s.Name, s.Seed, s.Outcome})
	}
	want := []row{{"pinned-eof", 11, "pass"}, {"burst-c2s", 5, "pass"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scenarios (-want +got):\n%s", diff)
	}
}

// The shipped example scenario file runs clean against the bundled server.
func TestExampleScenarioFileRuns(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := append([]string{"test", "--seed", "1", "--parallel", "3", "--scenario", filepath.Join("..", "..", "examples", "scenarios", "chaos.yaml"), "--"}, selfServe(t)...)
	if code := run(args, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"PASS   slow-progress", "PASS   slow-answers", "PASS   eof-mid-call-pinned", "3 scenarios: 3 passed"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout.String())
		}
	}
}

// The built-in server scenarios beyond the default matrix find nothing
// wrong with the bundled server, which has no planted bug: a preset that
// did would be a false alarm for every user.
func TestExtraPresetsPassOnTheBundledServer(t *testing.T) {
	args := []string{"test", "--seed", "2", "--parallel", "4"}
	n := 0
	for _, p := range faults.Presets() {
		if p.For == faults.ForServer && !p.Default {
			args = append(args, "--scenario", p.Name)
			n++
		}
	}
	if n == 0 {
		t.Skip("no extra server presets")
	}
	var stdout, stderr bytes.Buffer
	if code := run(append(append(args, "--"), selfServe(t)...), nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	want := fmt.Sprintf("%d scenarios: %d passed", n, n)
	if n == 1 {
		want = "1 scenario: 1 passed"
	}
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, stdout.String())
	}
}

// examples holds the planted-bug examples the tests build, each once.
var examples struct {
	mu   sync.Mutex
	dir  string
	bins map[string]string
}

// exampleBin builds the example package examples/PKG (servers/crash,
// httpservers/cancel-panic...) once for every test that wants it; with
// --fixed each is its fixed twin.
func exampleBin(t *testing.T, pkg string) string {
	t.Helper()
	examples.mu.Lock()
	defer examples.mu.Unlock()
	if bin, ok := examples.bins[pkg]; ok {
		return bin
	}
	if examples.dir == "" {
		dir, err := os.MkdirTemp("", "mcpchaos-cmd-test-")
		if err != nil {
			t.Fatal(err)
		}
		examples.dir, examples.bins = dir, map[string]string{}
	}
	bin := filepath.Join(examples.dir, strings.ReplaceAll(pkg, "/", "-"))
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/mcpchaos/mcpchaos/examples/"+pkg).CombinedOutput(); err != nil {
		t.Fatalf("building examples/%s: %v\n%s", pkg, err, out)
	}
	examples.bins[pkg] = bin
	return bin
}

// crashServer is the planted-bug example that panics when its stdin closes
// under running calls (examples/servers/crash).
func crashServer(t *testing.T) string { return exampleBin(t, "servers/crash") }

// A failing scenario saved with --save-case replays with --cases: against
// the same buggy server it still fails the same way, with the same fault
// decisions; against a fixed server it passes.
func TestSaveCaseAndReplay(t *testing.T) {
	buggy := []string{crashServer(t)}
	cases := filepath.Join(t.TempDir(), "cases")
	var stdout, stderr bytes.Buffer
	args := append([]string{"test", "--seed", "3", "--deadline", "2s", "--scenario", "eof-inflight", "--scenario", "burst-c2s", "--save-case", cases, "--"}, buggy...)
	if code := run(args, nil, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1 (the planted bug)\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "1 failing scenario run(s) saved as cases in "+cases) {
		t.Errorf("the saved cases are not announced:\n%s", stdout.String())
	}
	entries, _ := os.ReadDir(cases)
	if len(entries) != 1 || entries[0].Name() != "eof-inflight-seed3.yaml" {
		t.Fatalf("case directory holds %v, want eof-inflight-seed3.yaml only", entries)
	}
	c, err := faults.ReadCaseFile(filepath.Join(cases, entries[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"crash"}, c.Findings); diff != "" {
		t.Errorf("case findings (-want +got):\n%s", diff)
	}
	if c.Seed != 3 || c.Scenario.Name != "eof-inflight" || c.Scenario.Deadline.String() != "2s" || !cmp.Equal(c.Command, buggy) {
		t.Errorf("case: seed %d, scenario %+v, command %q", c.Seed, c.Scenario, c.Command)
	}
	if len(c.Decisions) == 0 || c.Decisions[0].Action != "eof" || c.Decisions[0].Method != "tools/call" || c.Decisions[0].Dir != "c2s" {
		t.Errorf("case decisions = %+v, want the eof fired on a tools/call", c.Decisions)
	}

	for _, tc := range []struct {
		name    string
		command []string
		code    int
		want    string
	}{
		{"recorded command", nil, 1, "STILL FAILS  " + filepath.Join(cases, "eof-inflight-seed3.yaml") + ": the same way (crash)\n"},
		{"same buggy server", buggy, 1, "STILL FAILS  " + filepath.Join(cases, "eof-inflight-seed3.yaml") + ": the same way (crash)\n"},
		{"fixed twin", []string{buggy[0], "--fixed"}, 0, "PASSES       " + filepath.Join(cases, "eof-inflight-seed3.yaml") + ": no longer fails (was crash)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"test", "--deadline", "2s", "--cases", cases}
			if tc.command != nil {
				args = append(append(args, "--"), tc.command...)
			}
			if code := run(args, nil, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout.String(), stderr.String())
			}
			if !strings.HasSuffix(stdout.String(), tc.want) {
				t.Errorf("stdout does not end in %q:\n%s", tc.want, stdout.String())
			}
		})
	}
}

func TestCasesErrors(t *testing.T) {
	empty := t.TempDir()
	malformed := t.TempDir()
	os.WriteFile(filepath.Join(malformed, "a.yaml"), []byte("version: 1\nscenario: {name: a, faults: [eof]}\nseed: x\ncommand: [srv]\nfindings: []\n"), 0o644)
	stray := t.TempDir()
	os.WriteFile(filepath.Join(stray, "notes.txt"), []byte("hi\n"), 0o644)
	checkUsageErrors(t, []usageCase{
		{"empty directory", []string{"test", "--cases", empty}, empty + " holds no case files; save some with mcpchaos test --save-case " + empty},
		{"missing directory", []string{"test", "--cases", filepath.Join(empty, "nope")}, "cannot read the case directory"},
		{"malformed case", []string{"test", "--cases", malformed}, filepath.Join(malformed, "a.yaml") + `:3: seed: expected a whole number from 0 to 18446744073709551615, got "x"`},
		{"not a case file", []string{"test", "--cases", stray}, filepath.Join(stray, "notes.txt") + ": not a case file"},
		{"with --scenario", []string{"test", "--cases", empty, "--scenario", "stall-s2c"}, "--cases replays the recorded scenarios with their recorded seeds; it takes no --scenario"},
	})
}

// The listing shows every preset and every bug class.
func TestScenariosListsPresetsAndBugClasses(t *testing.T) {
	var stdout bytes.Buffer
	if code := run([]string{"scenarios"}, nil, &stdout, &bytes.Buffer{}); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, p := range faults.Presets() {
		if !strings.Contains(stdout.String(), "\n  "+p.Name+": "+p.Doc) {
			t.Errorf("preset %s is not listed", p.Name)
		}
	}
	for _, c := range faults.BugClasses {
		if !strings.Contains(stdout.String(), c.Summary) {
			t.Errorf("bug class %d is not listed", c.N)
		}
	}
}
