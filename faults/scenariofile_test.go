package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func seedOf(v uint64) *uint64 { return &v }

func TestParseScenarioFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		want []Scenario
	}{
		{"minimal", "version: 1\nscenarios:\n  - name: a\n    faults: [eof]\n",
			[]Scenario{{Name: "a", Faults: []string{"eof"}, Source: "chaos.yaml:3"}}},
		{"every field", `version: 1
scenarios:
  - name: slow-progress
    doc: progress arrives late
    era: stateful
    faults:
      - delay:on=s2c:notification:notifications/progress,for=500ms
      - "eof:on=c2s:request:tools/call,inflight=2"
    workload: {calls: 5, concurrency: 3}
    deadline: 10s
    hang-after: 90s
    seed: 18446744073709551615
    expect: success
    findings: [hang, crash]
  - name: second
    faults: [stall]
    seed: 0x10
`, []Scenario{{
			Name: "slow-progress", Doc: "progress arrives late", Era: "stateful",
			Faults:   []string{"delay:on=s2c:notification:notifications/progress,for=500ms", "eof:on=c2s:request:tools/call,inflight=2"},
			Workload: Workload{Calls: 5, Concurrency: 3}, Deadline: 10 * time.Second, HangAfter: 90 * time.Second, Seed: seedOf(1<<64 - 1),
			Expect: "success", Findings: []string{"hang", "crash"}, Source: "chaos.yaml:3",
		}, {Name: "second", Faults: []string{"stall"}, Seed: seedOf(16), Source: "chaos.yaml:15"}}},
		{"comments and a document marker", "# mine\n---\nversion: 1 # format\nscenarios: # list\n- name: x.y_z-1\n  faults: [drop]\n",
			[]Scenario{{Name: "x.y_z-1", Faults: []string{"drop"}, Source: "chaos.yaml:5"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseScenarioFile("chaos.yaml", []byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scenarios (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseScenarioFileErrors(t *testing.T) {
	const head = "version: 1\nscenarios:\n  - name: a\n    faults: [eof]\n"
	for _, tc := range []struct {
		name, file, want string
	}{
		{"empty", "", "chaos.yaml:1: the file is empty; a scenario file starts with version: 1"},
		{"only a comment", "# nothing\n", "chaos.yaml:1: the file is empty; a scenario file starts with version: 1"},
		{"missing version", "scenarios:\n  - name: a\n    faults: [eof]\n", "chaos.yaml:1: no version; a scenario file starts with version: 1 (the format it is written in)"},
		{"unknown version", "version: 2\nscenarios: []\nnext: 1\n", "chaos.yaml:1: version: unknown version 2; this mcpchaos reads scenario file version 1 (a newer mcpchaos may read this file)"},
		{"version as a string", "version: \"1\"\nscenarios: []\n", `chaos.yaml:1: version: expected the format version 1, got "1"`},
		{"not a mapping", "- 1\n", "chaos.yaml:1: expected a mapping with version: and the scenario file's other keys, got a list"},
		{"unknown top key", "version: 1\nscenario: []\n", `chaos.yaml:2: unknown key "scenario" (did you mean "scenarios"?) (allowed: version, scenarios)`},
		{"no scenarios key", "version: 1\n", "chaos.yaml:1: no scenarios:; it is required (keys: version, scenarios)"},
		{"no scenarios", "version: 1\nscenarios: []\n", "chaos.yaml:2: scenarios: no scenarios; list at least one, as in\n  scenarios:\n    - name: slow-answers\n      faults: [\"delay:on=s2c:response:tools/call,for=1s\"]"},
		{"scenarios not a list", "version: 1\nscenarios: {a: 1}\n", "chaos.yaml:2: scenarios: expected a list of scenarios, got a mapping"},
		{"duplicate key", "version: 1\nversion: 1\n", "chaos.yaml:2: version: given twice (first at line 1)"},
		{"unknown scenario key", head + "    fualts: [eof]\n", `chaos.yaml:5: scenarios[0]: unknown key "fualts" (did you mean "faults"?) (allowed: name, doc, era, faults, workload, deadline, hang-after, seed, expect, findings)`},
		{"scenario not a mapping", "version: 1\nscenarios:\n  - eof\n", `chaos.yaml:3: scenarios[0]: expected a mapping with keys name, doc, era, faults, workload, deadline, hang-after, seed, expect, findings, got "eof"`},
		{"no name", "version: 1\nscenarios:\n  - faults: [eof]\n", "chaos.yaml:3: scenarios[0]: no name:; it is required (keys: name, doc, era, faults, workload, deadline, hang-after, seed, expect, findings)"},
		{"name a number", "version: 1\nscenarios:\n  - name: 12\n    faults: [eof]\n", "chaos.yaml:3: scenarios[0].name: expected a string, got the number 12"},
		{"name with a slash", "version: 1\nscenarios:\n  - name: a/b\n    faults: [eof]\n", `chaos.yaml:3: scenarios[0].name: "a/b" is not a scenario name; use letters, digits, '.', '_' and '-' (it names transcript files), at most 100 characters`},
		{"baseline", "version: 1\nscenarios:\n  - name: baseline\n    faults: [eof]\n", `chaos.yaml:3: scenarios[0].name: "baseline" is the no-fault run every matrix starts with; choose another name`},
		{"unknown fault", "version: 1\nscenarios:\n  - name: a\n    faults:\n      - eof\n      - stal\n",
			`chaos.yaml:6: scenarios[0].faults[1]: fault "stal": unknown fault "stal" (did you mean "stall"?) ` + knownFaults},
		{"bad fault spec", "version: 1\nscenarios:\n  - name: a\n    faults: [\"burst:count=many\"]\n", `chaos.yaml:4: scenarios[0].faults[0]: fault "burst:count=many": count: "many" is not a whole number >= 0`},
		{"faults not a list", "version: 1\nscenarios:\n  - name: a\n    faults: eof\n", `chaos.yaml:4: scenarios[0].faults: expected a list of strings, got "eof"`},
		{"no faults", "version: 1\nscenarios:\n  - name: a\n    faults: []\n", "chaos.yaml:4: scenarios[0].faults: no faults; a scenario injects at least one (a run without faults is the baseline every matrix starts with)"},
		{"fault a mapping", "version: 1\nscenarios:\n  - name: a\n    faults:\n      - eof: 1\n", "chaos.yaml:5: scenarios[0].faults[0]: expected a string, got a mapping"},
		{"duplicate name", head + "  - name: a\n    faults: [stall]\n", `chaos.yaml:5: scenarios[1].name: scenario "a" is already defined at line 3; scenario names must be unique in a file`},
		{"unknown era", head + "    era: statefull\n", `chaos.yaml:5: scenarios[0].era: "statefull" is not allowed (did you mean "stateful"?) (allowed: stateful, stateless)`},
		{"era a bool", head + "    era: true\n", "chaos.yaml:5: scenarios[0].era: expected a string, got the boolean true (allowed: stateful, stateless)"},
		{"unknown expect", head + "    expect: pass\n", `chaos.yaml:5: scenarios[0].expect: "pass" is not allowed (allowed: success, failure)`},
		{"workload key", head + "    workload: {call: 3}\n", `chaos.yaml:5: scenarios[0].workload: unknown key "call" (did you mean "calls"?) (allowed: calls, concurrency, sessions, hostile)`},
		{"workload type", head + "    workload: {calls: x}\n", `chaos.yaml:5: scenarios[0].workload.calls: expected a whole number from 1 to 10000, got "x"`},
		{"workload zero", head + "    workload: {concurrency: 0}\n", "chaos.yaml:5: scenarios[0].workload.concurrency: 0 is out of range; give a whole number from 1 to 1000"},
		{"workload a list", head + "    workload: [3]\n", "chaos.yaml:5: scenarios[0].workload: expected a mapping with keys calls, concurrency, sessions, hostile, got a list"},
		{"deadline without a unit", head + "    deadline: 10\n", "chaos.yaml:5: scenarios[0].deadline: expected a duration with a unit, as in 10s or 500ms, got the number 10"},
		{"hang-after without a unit", head + "    hang-after: 120\n", "chaos.yaml:5: scenarios[0].hang-after: expected a duration with a unit, as in 10s or 500ms, got the number 120"},
		{"deadline negative", head + "    deadline: -1s\n", `chaos.yaml:5: scenarios[0].deadline: "-1s" is not a positive duration; write one with a unit, as in 10s or 500ms`},
		{"seed negative", head + "    seed: -1\n", "chaos.yaml:5: scenarios[0].seed: -1 is out of range; give a whole number from 0 to 18446744073709551615"},
		{"seed a string", head + "    seed: abc\n", `chaos.yaml:5: scenarios[0].seed: expected a whole number from 0 to 18446744073709551615, got "abc"`},
		{"unknown finding", head + "    findings: [hangs]\n", `chaos.yaml:5: scenarios[0].findings[0]: unknown finding kind "hangs" (did you mean "hang"?) (kinds: hang, crash, lost-response, duplicate-response, unknown-response, zombie, protocol-violation, cross-session, security)`},
		{"finding twice", head + "    findings:\n      - hang\n      - hang\n", `chaos.yaml:7: scenarios[0].findings[1]: "hang" is listed twice`},
		{"alias", "version: 1\nscenarios:\n  - &a {name: a, faults: [eof]}\n  - *a\n", "chaos.yaml:4: YAML aliases (*a) are not supported; write the value out"},
		{"two documents", head + "---\nversion: 1\n", "chaos.yaml:5: a second YAML document (after ---); a file holds one document"},
		// The parser names the line where the broken block starts.
		{"syntax", "version: 1\nscenarios:\n  - name: a\n   faults: [eof]\n", "chaos.yaml:3: YAML syntax: did not find expected '-' indicator"},
		{"unclosed flow mapping", "version: 1\nscenarios: {a: 1\n", "chaos.yaml:2: YAML syntax: did not find expected ',' or '}'"},
		{"mapping in a list item", "version: 1\nscenarios:\n  - name: a\n    faults: [eof]\n  x: 1\n", "chaos.yaml:3: YAML syntax: did not find expected '-' indicator"},
		{"bad key", "version: 1\nscenarios:\n  - name: a\n    faults: [eof]\n    bad key: : x\n", "chaos.yaml:5: YAML syntax: mapping values are not allowed in this context"},
		{"tab indentation", "version: 1\nscenarios:\n\t- name: a\n", "chaos.yaml:3: YAML syntax: found character that cannot start any token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseScenarioFile("chaos.yaml", []byte(tc.file))
			if err == nil {
				t.Fatalf("no error; got %+v", got)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// The shipped example parses, and every scenario in it is usable by test.
func TestExampleScenarioFile(t *testing.T) {
	got, err := ReadScenarioFile(filepath.Join("..", "examples", "scenarios", "chaos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 3 {
		t.Errorf("the example has %d scenarios; it should show the format's fields", len(got))
	}
}

func TestResolveScenarios(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	os.WriteFile(file, []byte("version: 1\nscenarios:\n  - name: a\n    faults: [eof]\n  - name: b\n    faults: [stall]\n"), 0o644)
	clash := filepath.Join(dir, "clash.yaml")
	os.WriteFile(clash, []byte("version: 1\nscenarios:\n  - name: stall-s2c\n    faults: [eof]\n"), 0o644)
	presets := PresetsFor(ForServer)

	names := func(ss []Scenario) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name+"="+s.Selector())
		}
		return out
	}
	got, err := ResolveScenarios([]string{"stall-s2c", file, file + "#a", "concurrent-calls"}, presets)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"stall-s2c=stall-s2c", "a=" + file + "#a", "b=" + file + "#b", "concurrent-calls=concurrent-calls"}
	if diff := cmp.Diff(want, names(got)); diff != "" {
		t.Errorf("resolved (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		refs []string
		want string
	}{
		{[]string{file + "#c"}, `--scenario ` + file + `#c: ` + file + ` has no scenario "c" (did you mean "a"?) (it has: a, b)`},
		{[]string{"stall-s2c", clash}, `two scenarios are named "stall-s2c" (built in and ` + clash + `:3); rename one`},
		{[]string{filepath.Join(dir, "missing.yaml")}, "cannot read the scenario file: open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
		{[]string{"#a"}, "--scenario #a: no file before #"},
		{[]string{"progress-before-response"}, `unknown scenario "progress-before-response"`},
	} {
		_, err := ResolveScenarios(tc.refs, presets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ResolveScenarios(%q) = %v, want an error containing %q", tc.refs, err, tc.want)
		}
	}

	one, err := ResolveScenario(file+"#b", presets)
	if err != nil || one.Name != "b" {
		t.Errorf("ResolveScenario(#b) = %+v, %v", one, err)
	}
	_, err = ResolveScenario(file, presets)
	if want := "the file has 2 scenarios and one session runs one; pick it with " + file + "#NAME, NAME one of: a, b"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ResolveScenario(file) = %v, want %q", err, want)
	}
}

func TestPresets(t *testing.T) {
	seen := map[string]string{}
	for _, p := range Presets() {
		// A scenario of several sessions tests them side by side without a
		// fault, hostile-input the hostile workload; every other preset
		// has one.
		if p.Name == "" || p.Doc == "" || len(p.Faults) == 0 && p.Sessions() == 1 && p.Workload.Hostile == "" {
			t.Errorf("preset %+v lacks a name, a doc or faults", p)
		}
		if p.For != ForServer && p.For != ForClient && p.For != ForHTTPServer && p.For != ForHTTPClient {
			t.Errorf("preset %s: For = %q", p.Name, p.For)
		}
		if _, dup := seen[p.Name]; dup {
			t.Errorf("preset %s is listed twice", p.Name)
		}
		seen[p.Name] = p.For
		if _, err := p.Parse(); err != nil {
			t.Error(err)
		}
		client := p.For == ForClient || p.For == ForHTTPClient
		if !client && p.Expect != "" {
			t.Errorf("server preset %s sets Expect, which only test-client judges", p.Name)
		}
		if client && (p.Expect == "" || !p.Workload.IsZero()) {
			t.Errorf("client preset %s: a client scenario needs Expect and has no probe workload", p.Name)
		}
	}
	for i, c := range BugClasses {
		if c.N != i+1 || (len(c.Presets) == 0) == (c.Pending == "") {
			t.Errorf("bug class %d: numbered %d with %d presets, pending %q; DESIGN.md lists classes 1-8, each needs a preset or a reason it has none", i+1, c.N, len(c.Presets), c.Pending)
		}
		for _, name := range c.Presets {
			if _, ok := seen[name]; !ok {
				t.Errorf("bug class %d names preset %q, which does not exist", c.N, name)
			}
		}
	}
	if len(BugClasses) != 8 {
		t.Errorf("%d bug classes, DESIGN.md has 8", len(BugClasses))
	}
}
