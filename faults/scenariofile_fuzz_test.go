package faults

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzScenarioFile: whatever the bytes, ParseScenarioFile returns either
// scenarios that run (each parses, names are unique) or a *FileError with a
// line in the file; it never panics.
func FuzzScenarioFile(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "examples", "scenarios", "chaos.yaml")); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"", "version: 1\n", "version: 1\nscenarios:\n  - name: a\n    faults: [eof]\n",
		"version: 1\nscenarios:\n  - {name: a, faults: [\"stall:for=1s\"], workload: {calls: 3, concurrency: 2}, deadline: 1s, seed: 5, era: stateless, expect: failure, findings: [hang]}\n",
		"version: 2\n", "- 1\n", "a: &x [*x, *x]\n", "version: 1\n---\nversion: 1\n", "version: !!binary aGk=\n",
		"version: 1\nscenarios:\n  - name: a\n    faults: [eof]\n  - name: a\n    faults: [eof]\n",
		"{version: 1, scenarios: [{name: a, faults: [eof], seed: 0x10}]}\n", "\t- x", "version: 1\nscenarios: [[[[[[[[\n",
		"version: 1\nscenarios:\n  - name: a\n    faults: [\"burst:count=99999999999999999999\"]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		scs, err := ParseScenarioFile("f.yaml", data)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Line < 1 || !strings.HasPrefix(err.Error(), "f.yaml:") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		if len(scs) == 0 {
			t.Fatal("no error and no scenarios")
		}
		names := map[string]bool{}
		for _, sc := range scs {
			if names[sc.Name] {
				t.Fatalf("scenario %q twice", sc.Name)
			}
			names[sc.Name] = true
			if _, err := sc.Parse(); err != nil {
				t.Fatalf("a scenario that does not parse was accepted: %v", err)
			}
		}
	})
}
