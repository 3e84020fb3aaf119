package proof

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// hostileVerdicts are the corpus's verdicts under the hostile-input
// scenario (issue 40), each read against the specification
// (docs/hostile.md, "What the corpus shows"):
//
//   - the TypeScript SDK's servers drop a tools/call whose params are null
//     (its transport refuses the message before the protocol layer sees its
//     id), where JSON-RPC owes -32600;
//   - the Python SDK's, on mcp 2.3.0, never answer a tool call whose
//     argument holds a lone surrogate escape: the answer, which quotes it,
//     cannot be encoded; FastMCP 4 drops params that are an array;
//   - mcp-go and the Go SDK answer every request of it.
//
// None answers arguments that break a tool's schema with a success, and
// none breaks its own outputSchema.
var hostileVerdicts = map[string]verdict{
	"server-everything":                    pass(malformedDropped),
	"server-memory":                        pass(malformedDropped),
	"server-filesystem":                    pass(malformedDropped),
	"server-sequential-thinking":           pass(malformedDropped),
	"mcp-server-time":                      pass(malformedDropped),
	"mcp-server-git":                       pass(malformedDropped),
	"mcp-server-fetch":                     pass(malformedDropped),
	"fastmcp 4 server":                     pass(malformedDropped),
	"python-sdk simple-tool":               pass(malformedDropped),
	"python-sdk tool_progress":             pass(malformedDropped),
	"python-sdk sampling":                  pass(malformedDropped),
	"typescript-sdk progressExample":       pass(malformedDropped),
	"typescript-sdk mcpServerOutputSchema": pass(malformedDropped),
	"typescript-sdk toolWithSampleServer":  pass(malformedDropped),
	"go-sdk everything":                    pass(),
	"mcp-go everything":                    pass(),
	"mcp-go sampling_server":               pass(),
	"brave-search-mcp-server":              pass(malformedDropped),
	"notion-mcp-server":                    pass(malformedDropped),
	"duckduckgo-mcp-server":                pass(malformedDropped),
	"tavily-mcp":                           pass(malformedDropped),
}

const malformedDropped = reports.RuleMalformedUnanswered

// TestCorpusHostileInput runs hostile-input on every server of the corpus,
// side by side, and pins each verdict: a change of the workload or of the
// judge that turns a fair server's answer into a finding fails here.
func TestCorpusHostileInput(t *testing.T) {
	dir := corpusDir(t)
	typeScriptSDK(t, filepath.Join(repoRoot(t), "examples", "typescript"))
	hostile, err := faults.SelectScenarios(faults.PresetsFor(faults.ForServer), []string{"hostile-input"})
	if err != nil {
		t.Fatal(err)
	}
	for _, srv := range corpus {
		want, ok := hostileVerdicts[srv.name]
		if !ok {
			t.Errorf("hostileVerdicts has no row for %s", srv.name)
			continue
		}
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			report := runCorpusServer(t, dir, srv, hostile)
			got := verdictsOf(report)["hostile-input"]
			if !cmp.Equal(want, got) {
				var b strings.Builder
				reports.WriteSummary(&b, report)
				t.Errorf("hostile-input: %+v, want %+v\n%s", got, want, b.String())
			}
		})
	}
}
