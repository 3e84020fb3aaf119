package suite

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
)

// workloadHints tells the user, on the baseline, what the probe's workload
// could not do well by itself and which flag mends it: a tool that hangs
// without faults may only be slow (--deadline, --skip-tool), and a tool that
// answered the arguments generated from its schema with a tool error was
// barely exercised (--call).
func workloadHints(base *scenarioRun, deadline time.Duration) {
	for i := range base.verdict.Findings {
		f := &base.verdict.Findings[i]
		if f.Kind == reports.KindHang && f.Request != nil && f.Request.Tool != "" {
			f.Message += fmt.Sprintf("; if %s is merely slow and sends no progress, give it a --deadline longer than %s, or leave it out with --skip-tool %s",
				f.Request.Tool, deadline, f.Request.Tool)
		}
	}
	if base.probe == nil {
		return
	}
	if n := len(base.probe.TaskOnlyTools); n > 0 {
		base.result.Notes = append(base.result.Notes, fmt.Sprintf(
			"%d %s not called: the server says %s may only be called as tasks (execution.taskSupport \"required\"), which the probe does not do: %s",
			n, words.Plural(n, "tool", "tools"), words.Plural(n, "it", "they"), strings.Join(base.probe.TaskOnlyTools, ", ")))
	}
	var failed []string
	for _, r := range base.probe.Requests {
		if r.ToolError == "" {
			continue
		}
		what := r.Tool + " (" + r.ToolError + ")"
		if !slices.ContainsFunc(failed, func(s string) bool { return strings.HasPrefix(s, r.Tool+" (") }) {
			failed = append(failed, what)
		}
	}
	if len(failed) == 0 {
		return
	}
	shown := failed
	if len(shown) > 3 {
		shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(failed)-3))
	}
	base.result.Notes = append(base.result.Notes, fmt.Sprintf(
		"%d %s answered the arguments generated from the schema with a tool error (an answer, not a finding; where the arguments were the trouble, pass real ones with --call NAME=JSON): %s",
		len(failed), words.Plural(len(failed), "tool", "tools"), strings.Join(shown, "; ")))
}
