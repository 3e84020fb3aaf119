package proof

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/reports"
)

// TestExploreFalseAlarmsStayFixed runs again, as their repro lines do
// (mcpchaos test --fault F --seed 1), the plans on which mcpchaos explore
// raised a false alarm on the corpus (docs/corpus.md, "mcpchaos explore on
// the corpus"), and wants the verdict the specification gives.
func TestExploreFalseAlarmsStayFixed(t *testing.T) {
	corpusDir(t)
	typeScriptSDK(t, filepath.Join(repoRoot(t), "examples", "typescript"))
	bin := mcpchaosBinary(t)
	targets := slices.Concat(stdioExploreTargets(), httpExploreTargets())
	for _, tc := range []struct {
		name, transport, server, fault string
		// never is the rule no finding of the fault's scenario may cite;
		// may are the only rules one may cite.
		never string
		may   []string
	}{
		{
			// The tasks/cancel that borrowed a tool call's id was
			// answered first; its Task was held to tools/call's schema.
			name: "server-everything answers two requests under one id out of order", transport: "stdio", server: "server-everything",
			fault: "id-collision:on=c2s:request:tasks/cancel,nth=1", never: reports.RuleSchema,
			may: []string{reports.RuleShutdownSIGTERM},
		},
		{
			// go-sdk drops a request whose id is in flight, by design.
			name: "go-sdk refuses a request under an id it holds", transport: "stdio", server: "go-sdk everything",
			fault: "id-collision:on=c2s:request:resources/read,nth=1", never: reports.RuleUnanswered,
			may: []string{reports.RuleUnansweredReusedID},
		},
		{
			// The handled UnsupportedProtocol (the probe's URL has no
			// scheme) was named the crash; the exit was the BrokenPipeError
			// of the answer's write after the half-close.
			name: "python-sdk simple-tool dies of the half-close, not of the handled exception", transport: "stdio", server: "python-sdk simple-tool",
			fault: "half-close:on=s2c:error:tools/call,nth=1,tool=fetch,dir=s2c", never: reports.RuleCrashSignature,
			may: []string{reports.RuleCrashAfterHalfClose, reports.RuleLostAtShutdown},
		},
		{
			// The 400 refusing server/discover, its connection cut: its
			// id-null body read as an answer to nothing.
			name: "typescript-sdk refuses server/discover, and eof cuts the connection", transport: "http", server: "typescript-sdk jsonResponseStreamableHttp",
			fault: "eof:on=c2s:request:server/discover,nth=1", never: reports.RuleUnknownResponse,
		},
	} {
		i := slices.IndexFunc(targets, func(x exploreTarget) bool { return x.transport == tc.transport && x.name == tc.server })
		if i < 0 {
			t.Fatalf("%s (%s) is not in the corpus", tc.server, tc.transport)
		}
		tgt := targets[i]
		t.Run(tc.name, func(t *testing.T) {
			scratch := t.TempDir()
			report := filepath.Join(scratch, "report.json")
			args := append([]string{"test", "--fault", tc.fault, "--seed", "1", "--report", report}, tgt.args(t, corpusDir(t), repoRoot(t), scratch)...)
			out := runFinding(t, bin, scratch, 3*time.Minute, args...)
			var r reports.Report
			readJSON(t, report, &r)
			for _, f := range r.Findings {
				if f.Scenario == "baseline" {
					continue
				}
				if f.Rule == tc.never || !slices.Contains(tc.may, f.Rule) {
					t.Errorf("%s %s/%s: %s\n  repro: %s", f.Severity, f.Kind, f.Rule, f.Message, f.Repro)
				}
			}
			if t.Failed() {
				t.Logf("mcpchaos test's output:\n%s", tail(out, 6000))
			}
		})
	}
}
