package main

import (
	"bytes"
	"strings"
	"testing"

	goldenfile "github.com/mcpchaos/mcpchaos/internal/golden"
)

// docs/cli.md is every command's --help, as the binary prints it: go test
// ./cmd/mcpchaos -update rewrites it after a flag changes, and the test
// fails while the two differ, so the reference cannot drift from the code.
func TestCLIReferenceIsTheHelp(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("# Command-line reference\n\n")
	doc.WriteString("Every command's `--help`, as `mcpchaos` prints it (generated: `go test ./cmd/mcpchaos -run TestCLIReferenceIsTheHelp -update`).\n")
	doc.WriteString("Exit statuses: 0 nothing to report, 1 findings (for `report diff`: something new fails), 2 a usage or set-up error;\n")
	doc.WriteString("[reports.md](reports.md#exit-status) has the details, [files.md](files.md) the file formats, [verdicts.md](verdicts.md) the findings.\n\n")
	doc.WriteString("## mcpchaos\n\n```\n" + usage + "```\n")
	for _, cmd := range [][]string{{"test"}, {"test-client"}, {"explore"}, {"explore-client"}, {"wrap"}, {"proxy"}, {"judge"}, {"report"}, {"report", "diff"}, {"report", "merge"}, {"serve"}, {"faults"}, {"scenarios"}} {
		var stdout, stderr bytes.Buffer
		if code := run(append(cmd, "--help"), nil, &stdout, &stderr); code != exitOK {
			t.Errorf("mcpchaos %s --help: exit %d: %s", strings.Join(cmd, " "), code, stderr.String())
		}
		doc.WriteString("\n## mcpchaos " + strings.Join(cmd, " ") + "\n\n```\n" + stdout.String() + "```\n")
	}
	goldenfile.Check(t, "../../../docs/cli.md", []byte(doc.String()))
}
