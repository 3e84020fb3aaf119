package faults

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzCaseFile: whatever the bytes, ParseCaseFile returns either a case or
// a *FileError with a line in the file; it never panics, and a case it
// accepts reads back the same once written by MarshalCase.
func FuzzCaseFile(f *testing.F) {
	const head = "version: 1\nscenario: {name: a, faults: [eof]}\nseed: 1\ncommand: [srv]\n"
	for _, s := range []string{
		"", "version: 1\n", head + "findings: []\n", "version: 2\n", "- 1\n",
		head + "findings: [crash]\ndecisions:\n  - {label: eof#1, spec: eof, action: eof, seq: 3, dir: c2s, kind: request, method: tools/call, id: '\"a\"'}\n",
		head + "server: [mcpchaos, serve]\nfindings: [hang]\n",
		head + "calls:\n  - {tool: echo, arguments: '{\"text\":\"hi\"}'}\n  - tool: slow\n    arguments: '{ \"ms\" : 1.5e2 }'\nskip-tools: [big, sample]\nfindings: []\n",
		head + "calls: [{tool: echo, arguments: '[1]'}]\nfindings: []\n",
		head + "calls: [{tool: echo, arguments: {text: hi}}]\nfindings: []\n",
		head + "calls: []\nskip-tools: []\nfindings: []\n",
		head + "server: [srv]\ncalls: [{tool: echo, arguments: '{}'}]\nfindings: []\n",
		head + "skip-tools: [echo, '']\nfindings: []\n",
		"{version: 1, scenario: {name: a, faults: [eof], workload: {calls: 3, concurrency: 2}, deadline: 2s}, seed: 0x10, command: [srv], calls: [{tool: \"\\xff\", arguments: '{\"\\u00ff\":null}'}], findings: []}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCaseFile("f.yaml", data)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Line < 1 || !strings.HasPrefix(err.Error(), "f.yaml:") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		out, err := MarshalCase(c)
		if err != nil {
			t.Fatalf("an accepted case does not marshal: %v", err)
		}
		back, err := ParseCaseFile("f.yaml", out)
		if err != nil {
			t.Fatalf("an accepted case, written, does not read back: %v\n%s", err, out)
		}
		if diff := cmp.Diff(c, back); diff != "" {
			t.Fatalf("an accepted case, written and read back, differs (-read +reread):\n%s\n%s", diff, out)
		}
	})
}
