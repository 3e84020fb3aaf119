package reports

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/words"
)

// Fingerprint is what makes two findings of two runs the same finding: the
// kind, the crash signature, the scenario and the request's method. Ids,
// timings, seeds and messages are left out: they change from run to run
// while the bug stays.
type Fingerprint struct {
	Kind      string `json:"kind" yaml:"kind"`
	Signature string `json:"signature,omitempty" yaml:"signature,omitempty"`
	Scenario  string `json:"scenario" yaml:"scenario"`
	Method    string `json:"method,omitempty" yaml:"method,omitempty"`
}

// FingerprintOf is f's fingerprint.
func FingerprintOf(f *Finding) Fingerprint {
	fp := Fingerprint{Kind: f.Kind, Signature: f.Signature, Scenario: f.Scenario}
	if f.Request != nil {
		fp.Method = f.Request.Method
	}
	return fp
}

// String is the fingerprint as people read it: crash go:panic in
// eof-inflight (tools/call).
func (fp Fingerprint) String() string {
	s := fp.Kind
	if fp.Signature != "" {
		s += " " + fp.Signature
	}
	s += " in " + orDash(fp.Scenario)
	if fp.Method != "" {
		s += " (" + fp.Method + ")"
	}
	return s
}

func (fp Fingerprint) compare(o Fingerprint) int {
	return cmp.Or(cmp.Compare(fp.Scenario, o.Scenario), cmp.Compare(kindOrder[fp.Kind], kindOrder[o.Kind]),
		cmp.Compare(fp.Kind, o.Kind), cmp.Compare(fp.Signature, o.Signature), cmp.Compare(fp.Method, o.Method))
}

// DiffSchema names the JSON form of a report diff.
const DiffSchema = "mcpchaos.diff/v1"

// Diff compares the failing findings of two runs of the same matrix, an
// old one and a new one (before and after a change): what the change
// fixed, what it broke, what still fails. Only error findings count;
// warnings and expected findings fail no run. A finding of a scenario the
// other run did not run is neither fixed nor new: it is not compared.
type Diff struct {
	Schema string   `json:"schema"`
	Old    DiffSide `json:"old"`
	New    DiffSide `json:"new"`
	// Fixed failed in the old run and not in the new one; NewlyFailing the
	// other way round; StillFailing in both.
	Fixed        []DiffEntry `json:"fixed"`
	NewlyFailing []DiffEntry `json:"newly_failing"`
	StillFailing []DiffEntry `json:"still_failing"`
	// NotCompared are failing findings of scenarios only one run ran.
	NotCompared []DiffEntry `json:"not_compared"`
}

// DiffSide names one of the two runs.
type DiffSide struct {
	File    string `json:"file"`
	Target  Target `json:"target"`
	Seed    uint64 `json:"seed"`
	Outcome string `json:"outcome"`
}

// DiffEntry is one fingerprint: how many findings had it, and the message
// and repro line of the run it is listed from (the new one, but for fixed
// findings).
type DiffEntry struct {
	Fingerprint
	Count   int    `json:"count"`
	Message string `json:"message"`
	Repro   string `json:"repro"`
}

// DiffReports compares old with new.
func DiffReports(oldPath string, old *Report, newPath string, new *Report) *Diff {
	d := &Diff{Schema: DiffSchema,
		Old: DiffSide{File: oldPath, Target: old.Target, Seed: old.Seed, Outcome: old.Outcome},
		New: DiffSide{File: newPath, Target: new.Target, Seed: new.Seed, Outcome: new.Outcome}}
	oldF, newF := failingByFingerprint(old), failingByFingerprint(new)
	oldRan, newRan := scenariosRun(old), scenariosRun(new)
	for fp, e := range newF {
		switch {
		case oldF[fp] != nil:
			d.StillFailing = append(d.StillFailing, *e)
		case !oldRan[fp.Scenario]:
			d.NotCompared = append(d.NotCompared, *e)
		default:
			d.NewlyFailing = append(d.NewlyFailing, *e)
		}
	}
	for fp, e := range oldF {
		switch {
		case newF[fp] != nil:
		case !newRan[fp.Scenario]:
			d.NotCompared = append(d.NotCompared, *e)
		default:
			d.Fixed = append(d.Fixed, *e)
		}
	}
	for _, list := range []*[]DiffEntry{&d.Fixed, &d.NewlyFailing, &d.StillFailing, &d.NotCompared} {
		slices.SortFunc(*list, func(a, b DiffEntry) int { return a.Fingerprint.compare(b.Fingerprint) })
		if *list == nil {
			*list = []DiffEntry{}
		}
	}
	return d
}

// Regressed reports whether the new run fails where the old did not: the
// diff's exit status is 1 then.
func (d *Diff) Regressed() bool { return len(d.NewlyFailing) > 0 }

func failingByFingerprint(r *Report) map[Fingerprint]*DiffEntry {
	out := map[Fingerprint]*DiffEntry{}
	for i := range r.Findings {
		f := &r.Findings[i]
		if !f.Fails() {
			continue
		}
		fp := FingerprintOf(f)
		if e := out[fp]; e != nil {
			e.Count++
			continue
		}
		out[fp] = &DiffEntry{Fingerprint: fp, Count: 1, Message: f.Message, Repro: f.Repro}
	}
	return out
}

// scenariosRun are the scenarios a report ran, the baseline included.
func scenariosRun(r *Report) map[string]bool {
	ran := map[string]bool{}
	if r.Baseline != nil {
		ran[r.Baseline.Name] = true
	}
	for _, s := range r.Scenarios {
		ran[s.Name] = true
	}
	return ran
}

// WriteJSON writes the diff as indented JSON (mcpchaos.diff/v1).
func (d *Diff) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteMarkdown writes the diff for a pull request or job summary: what
// the change broke first, then what it fixed, what still fails and what
// could not be compared.
func (d *Diff) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	verdict := "✅ nothing new fails"
	if d.Regressed() {
		verdict = "❌ new failures"
	}
	fmt.Fprintf(&b, "## mcpchaos report diff: %s\n\n", verdict)
	fmt.Fprintf(&b, "%d new, %d fixed, %d still failing, %d not compared\n\n",
		len(d.NewlyFailing), len(d.Fixed), len(d.StillFailing), len(d.NotCompared))
	for _, side := range []struct {
		name string
		s    DiffSide
	}{{"old", d.Old}, {"new", d.New}} {
		fmt.Fprintf(&b, "- %s: %s, %s, seed %d, outcome %s\n", side.name, markdownCode(side.s.File), markdownCode(targetWords(side.s.Target)), side.s.Seed, orDash(side.s.Outcome))
	}
	for _, sec := range []struct {
		title   string
		entries []DiffEntry
	}{
		{"New failures", d.NewlyFailing},
		{"Fixed", d.Fixed},
		{"Still failing", d.StillFailing},
		{"Not compared (the scenario ran in one run only)", d.NotCompared},
	} {
		if len(sec.entries) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n| finding | count | message |\n|---|---|---|\n", sec.title)
		for _, e := range sec.entries {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", markdownText(e.Fingerprint.String()), e.Count, markdownText(words.Cut(e.Message, 300)))
		}
		if sec.title == "New failures" {
			b.WriteString("\nreplay them:\n\n")
			var repro strings.Builder
			for _, e := range sec.entries {
				repro.WriteString(e.Repro + "\n")
			}
			b.WriteString(markdownBlock(repro.String(), "sh"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
