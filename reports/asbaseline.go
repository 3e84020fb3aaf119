package reports

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/internal/words"
)

// BeyondBaseline returns the findings of a fault scenario's run that the
// baseline run of the same target did not have, and how many it had: a
// fault is not blamed for what the target does without one. Two findings
// are the same when they break the same rule with the same signature on
// the same method and tool: ids, timings and wording differ from run to run.
func BeyondBaseline(base, fs []Finding) (own []Finding, known int) {
	seen := map[string]bool{}
	for _, f := range base {
		seen[sameKey(f)] = true
	}
	for _, f := range fs {
		if seen[sameKey(f)] {
			known++
			continue
		}
		own = append(own, f)
	}
	return own, known
}

// KnownNote is the scenario note that says how many of its findings the
// baseline had.
func KnownNote(known int) string {
	return fmt.Sprintf("%d %s as in the baseline, reported there and not blamed on this scenario's faults",
		known, words.Plural(known, "finding", "findings"))
}

func sameKey(f Finding) string {
	k := f.Rule + "\x00" + f.Kind + "\x00" + f.Signature
	if f.Request != nil {
		k += "\x00" + f.Request.Method + "\x00" + f.Request.Tool
	}
	return k
}
