package suite

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/probe"
	"github.com/mcpchaos/mcpchaos/reports"
)

// workloadHints tells the user, on the baseline, what the probe's workload
// could not do well by itself and which flag mends it: a tool that hangs
// without faults may only be slow (--deadline, --skip-tool), and a tool that
// answered the arguments generated from its schema with a tool error was
// barely exercised (--call).
func workloadHints(base *scenarioRun, deadline time.Duration) {
	slowToolHints(base.verdict.Findings, deadline)
	if base.probe == nil {
		return
	}
	if c := base.probe.Coverage; c != nil {
		// First: the summary shows the first notes of a scenario, and
		// what the session exercised frames every other one.
		base.result.Notes = append([]string{coverageNote(c)}, base.result.Notes...)
	}
	if n := len(base.probe.TaskOnlyTools); n > 0 {
		base.result.Notes = append(base.result.Notes, fmt.Sprintf(
			"%d %s not called: the server says %s may only be called as tasks (execution.taskSupport \"required\"), and the probe calls tools as tasks only where the server declares tasks.requests.tools.call, %d at most: %s",
			n, words.Plural(n, "tool", "tools"), words.Plural(n, "it", "they"), probe.MaxTaskCalls, strings.Join(base.probe.TaskOnlyTools, ", ")))
	}
	// A tool that answered with a tool error (isError), or with a JSON-RPC
	// error (notion-mcp-server answers every failed API call -32603), was
	// barely exercised: the note says which, and what to pass.
	var toolErrors, rpcErrors []string
	for _, r := range base.probe.Requests {
		switch {
		case r.Deliberate != "" || r.Hostile != "":
			// Sent to be refused: its error is the answer it asked for.
		case r.ToolError != "":
			toolErrors = noteTool(toolErrors, r.Tool, r.ToolError)
		case r.Method == "tools/call" && r.Answered && r.Error != "":
			rpcErrors = noteTool(rpcErrors, r.Tool, r.Error)
		}
	}
	for _, failed := range []struct {
		what  string
		tools []string
	}{{"a tool error", toolErrors}, {"a JSON-RPC error", rpcErrors}} {
		if len(failed.tools) == 0 {
			continue
		}
		shown := failed.tools
		if len(shown) > 3 {
			shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(failed.tools)-3))
		}
		base.result.Notes = append(base.result.Notes, fmt.Sprintf(
			"%d %s answered the arguments generated from the schema with %s (an answer, not a finding; where the arguments were the trouble, pass real ones with --call NAME=JSON): %s",
			len(failed.tools), words.Plural(len(failed.tools), "tool", "tools"), failed.what, strings.Join(shown, "; ")))
	}
}

// coverageNote says which of the requests the server's capabilities make
// callable the session sent, why it did not send the others, where it
// sampled, and what it sent to be refused.
func coverageNote(c *probe.Coverage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the session sent %d of the %d %s the server's capabilities make callable", len(c.Sent), len(c.Callable), words.Plural(len(c.Callable), "request", "requests"))
	if len(c.NotSent) > 0 {
		var missing []string
		for _, n := range c.NotSent {
			missing = append(missing, n.Method+" ("+n.Why+")")
		}
		b.WriteString("; not sent: " + strings.Join(missing, "; "))
	}
	if len(c.Sampled) > 0 {
		b.WriteString("; bounded: " + strings.Join(c.Sampled, "; "))
	}
	if n := len(c.Deliberate); n > 0 {
		fmt.Fprintf(&b, "; and %d %s sent to be refused: %s", n, words.Plural(n, "request", "requests"), strings.Join(c.Deliberate, ", "))
	}
	if c.Hostile > 0 {
		fmt.Fprintf(&b, "; and %d hostile %s (malformed params, odd ids, arguments that break the tool's schema; each must be answered)", c.Hostile, words.Plural(c.Hostile, "request", "requests"))
	}
	if c.Growth > 0 {
		fmt.Fprintf(&b, "; and %d %s of growth series (the same request at growing sizes: does the answer time outgrow the input?)", c.Growth, words.Plural(c.Growth, "request", "requests"))
	}
	return b.String()
}

// noteTool adds "tool (why)" to failed, once per tool.
func noteTool(failed []string, tool, why string) []string {
	if slices.ContainsFunc(failed, func(s string) bool { return strings.HasPrefix(s, tool+" (") }) {
		return failed
	}
	return append(failed, tool+" ("+words.Cut(why, 120)+")")
}

// slowToolHints adds to each hang of a tool call what to pass if the tool
// is merely slow.
func slowToolHints(fs []reports.Finding, deadline time.Duration) {
	for i := range fs {
		f := &fs[i]
		if f.Kind == reports.KindHang && f.Request != nil && f.Request.Tool != "" {
			f.Message += fmt.Sprintf("; if %s is merely slow and sends no progress, give it a --deadline longer than %s, or leave it out with --skip-tool %s",
				f.Request.Tool, deadline, f.Request.Tool)
		}
	}
}

// scenarioHints is workloadHints for a fault scenario whose fault never
// fired, or fired and never landed: it ran as the baseline does, so a tool
// that hung in it may be as merely slow as one that hangs in the baseline.
// brave-search-mcp-server's summarizer, which polls its API 20 times,
// passed the baseline in a second and outran the deadline in a scenario
// that never fired on a loaded machine, and was called stuck with no word
// of --deadline. Where a fault landed, a hang is what the scenario looks
// for, and no hint excuses it.
func scenarioHints(r *scenarioRun, deadline time.Duration) {
	if !faultFired(r.result.Indeterminate) || !faultLanded(r.result.Indeterminate) {
		slowToolHints(r.verdict.Findings, deadline)
	}
}

// faultFired says whether a scenario's fault fired, from its indeterminate
// notes: the judge notes it when none did.
func faultFired(indeterminate []string) bool {
	return !slices.ContainsFunc(indeterminate, func(n string) bool { return strings.HasPrefix(n, "no fault fired") })
}

// faultLanded says whether a scenario's faults that fired had their effect,
// from its indeterminate notes: the judge notes a fault whose every firing
// did not land (wire.NotLanded), which ran as the baseline does.
func faultLanded(indeterminate []string) bool {
	return !slices.ContainsFunc(indeterminate, func(n string) bool { return strings.HasPrefix(n, "the fault fired but did not land") })
}
