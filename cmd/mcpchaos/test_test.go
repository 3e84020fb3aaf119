package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
)

// selfServe is the bundled example server, served by this test binary.
func selfServe(t *testing.T) []string {
	t.Setenv("MCPCHAOS_TEST_MAIN", "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	return []string{os.Args[0], "serve"}
}

func TestTestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(t *testing.T) []string
		want string
	}{
		{"unknown scenario", func(*testing.T) []string { return []string{"test", "--scenario", "eof-inflght", "--", "cat"} },
			`unknown scenario "eof-inflght" (did you mean "eof-inflight"?)`},
		{"bad call JSON", func(*testing.T) []string { return []string{"test", "--call", "echo=[1", "--", "cat"} },
			"--call echo: the arguments are not a JSON object"},
		{"nothing after --", func(*testing.T) []string { return []string{"test", "--"} }, "nothing after --"},
		{"unknown tool", func(t *testing.T) []string {
			return append([]string{"test", "--call", `nope={}`, "--deadline", "2s", "--"}, selfServe(t)...)
		}, `a --call names a tool the server does not list`},
		{"unknown era", func(*testing.T) []string { return []string{"test", "--era", "2024-11-05", "--", "cat"} },
			`--era "2024-11-05": want auto or stateful`},
		{"era with cases", func(t *testing.T) []string {
			return []string{"test", "--cases", t.TempDir(), "--era", "stateful", "--", "cat"}
		},
			"--cases replays each case with the era it recorded"},
		{"server that dies at once", func(*testing.T) []string {
			return []string{"test", "--deadline", "500ms", "--", "sh", "-c", "echo cannot open config.toml >&2; exit 1"}
		}, "the server does not start or initialize without faults"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args(t), nil, &stdout, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.want)
			}
		})
	}
	// The server's own words are shown when it cannot start.
	var stderr bytes.Buffer
	run([]string{"test", "--deadline", "500ms", "--", "sh", "-c", "echo cannot open config.toml >&2; exit 1"}, nil, &bytes.Buffer{}, &stderr)
	if !strings.Contains(stderr.String(), "cannot open config.toml") {
		t.Errorf("the server's stderr is not shown: %q", stderr.String())
	}
}

// A clean run writes a v1 report, and judging its transcripts offline says
// the same.
func TestTestReportAndJudge(t *testing.T) {
	dir := t.TempDir()
	reportPath := filepath.Join(dir, "report.json")
	var stdout, stderr bytes.Buffer
	args := append([]string{"test", "--seed", "7", "--scenario", "eof-inflight", "--scenario", "burst-c2s",
		"--report", reportPath, "--transcript-dir", dir, "--"}, selfServe(t)...)
	if code := run(args, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"seed 7", "PASS   baseline", "eof-inflight", "burst-c2s", "outcome pass"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout.String())
		}
	}
	report := readReportFile(t, reportPath)
	if report.Seed != 7 || len(report.Scenarios) != 2 || report.Outcome != "pass" {
		t.Errorf("report: seed %d, %d scenarios, outcome %s", report.Seed, len(report.Scenarios), report.Outcome)
	}

	var judged bytes.Buffer
	code := run([]string{"judge", filepath.Join(dir, "eof-inflight.jsonl"), filepath.Join(dir, "burst-c2s.jsonl")}, nil, &judged, &stderr)
	if code != exitOK || !strings.Contains(judged.String(), "outcome pass") {
		t.Errorf("judge exit %d:\n%s", code, judged.String())
	}
}

func TestJudgeRejectsWhatIsNotATranscript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(path, []byte("hello\n"), 0o644)
	var stderr bytes.Buffer
	if code := run([]string{"judge", path}, nil, &bytes.Buffer{}, &stderr); code != exitUsage {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "transcript line 1") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

// mcpchaos judge DIR/*.jsonl reports what the live run reported: a
// finding the baseline of the same target has too is reported once, in the
// baseline, and the fault scenario says so, as test does.
func TestJudgeReportsABaselineFindingOnce(t *testing.T) {
	dir := t.TempDir()
	write := func(scenario string, command string) string {
		path := filepath.Join(dir, scenario+"-"+command+".jsonl")
		lines := strings.Join([]string{
			`{"seq":1,"t_us":0,"type":"session","command":["` + command + `"],"seed":7,"format":2,"scenario":"` + scenario + `","role":"server","deadline_ms":100,"grace_ms":100}`,
			`{"seq":2,"t_us":1,"type":"process-started","pid":5,"command":["` + command + `"]}`,
			`{"seq":3,"t_us":10,"type":"received","dir":"c2s","kind":"request","id":"1","method":"tools/call","size":78,"message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}}`,
			`{"seq":4,"t_us":10,"type":"forwarded","dir":"c2s","of":3}`,
			`{"seq":5,"t_us":2000000,"type":"session-end","detail":"the client closed its output"}`,
		}, "\n") + "\n"
		if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	judged := func(paths ...string) *reports.Report {
		t.Helper()
		out := filepath.Join(dir, "report.json")
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"judge", "--report", out}, paths...), nil, &stdout, &stderr); code != exitFindings && code != exitOK {
			t.Fatalf("judge exit %d:\n%s%s", code, stdout.String(), stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var r reports.Report
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	alone := judged(write("burst-c2s", "srv"))
	if len(alone.Findings) == 0 {
		t.Fatal("the scenario judged alone has no finding; the test needs one")
	}
	r := judged(write("baseline", "srv"), write("burst-c2s", "srv"), write("burst-c2s", "other"))
	if got, want := len(r.Findings), 2*len(alone.Findings); got != want {
		t.Errorf("%d findings; want %d (the baseline's, and the other target's scenario's own)", got, want)
	}
	burst := r.Scenarios[1]
	if burst.Findings != 0 || burst.Outcome != reports.OutcomePass || !slices.ContainsFunc(burst.Notes, func(n string) bool { return strings.Contains(n, "as in the baseline") }) {
		t.Errorf("burst-c2s of the baseline's target: %d findings, outcome %s, notes %q; want none, pass, and a note that the baseline had them", burst.Findings, burst.Outcome, burst.Notes)
	}
	if other := r.Scenarios[2]; other.Findings != len(alone.Findings) {
		t.Errorf("burst-c2s of another target: %d findings; want its own %d", other.Findings, len(alone.Findings))
	}
}

// --era stateful skips server/discover: the probe opens every session with
// the initialize handshake, the repro lines say --era stateful, and a
// saved case records the era, so its replay speaks it too.
func TestTestEraStateful(t *testing.T) {
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases")
	// The scenario pins a crash the bundled server does not have: its run
	// fails with an expectation finding, which has a repro line and is
	// saved as a case.
	file := filepath.Join(dir, "chaos.yaml")
	scenario := "version: 1\nscenarios:\n  - name: pinned\n    faults: [\"delay:on=s2c:response:tools/call,for=10ms\"]\n    findings: [crash]\n"
	if err := os.WriteFile(file, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := append([]string{"test", "--seed", "7", "--era", "stateful", "--scenario", file,
		"--transcript-dir", dir, "--save-case", cases, "--"}, selfServe(t)...)
	if code := run(args, nil, &stdout, &stderr); code != exitFindings {
		t.Fatalf("exit %d, want %d (the pinned crash does not come)\nstdout:\n%s\nstderr:\n%s", code, exitFindings, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "--era stateful") {
		t.Errorf("the repro lines do not say --era stateful:\n%s", stdout.String())
	}
	for _, name := range []string{"baseline.jsonl", "pinned.jsonl"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`"server/discover"`)) || !bytes.Contains(b, []byte(`"initialize"`)) {
			t.Errorf("%s: the probe did not open with the initialize handshake alone", name)
		}
	}
	saved, _ := filepath.Glob(filepath.Join(cases, "*"))
	if len(saved) != 1 {
		t.Fatalf("saved cases %v, want one", saved)
	}
	if b, _ := os.ReadFile(saved[0]); !bytes.Contains(b, []byte("era: stateful")) {
		t.Errorf("the saved case does not record the era:\n%s", b)
	}
}
