package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// BaselineVersion is the baseline file format this build reads and writes.
const BaselineVersion = 1

// Baseline is the list of known findings a project accepts for now
// (--baseline FILE, written by --write-baseline FILE): a run with only
// known findings passes, a new finding fails it, and an entry that no
// longer fails fails it too (stale), so that a fixed bug cannot stay
// hidden behind its entry.
type Baseline struct {
	Version  int             `yaml:"version"`
	Findings []BaselineEntry `yaml:"findings"`
}

// BaselineEntry is one known finding: its fingerprint, and why it is
// accepted (a tracker link, say) for the people who read the file.
type BaselineEntry struct {
	Fingerprint `yaml:",inline"`
	Note        string `yaml:"note,omitempty"`
}

// BaselineOf is the baseline that accepts every error finding of r, each
// fingerprint once, sorted.
func BaselineOf(r *Report) *Baseline {
	b := &Baseline{Version: BaselineVersion, Findings: []BaselineEntry{}}
	seen := map[Fingerprint]bool{}
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Severity == SeverityWarning || f.Expected && !f.Baselined {
			continue
		}
		fp := FingerprintOf(f)
		if !seen[fp] {
			seen[fp] = true
			b.Findings = append(b.Findings, BaselineEntry{Fingerprint: fp})
		}
	}
	slices.SortFunc(b.Findings, func(x, y BaselineEntry) int { return x.compare(y.Fingerprint) })
	return b
}

// Write writes the baseline file.
func (b *Baseline) Write(w io.Writer) error {
	var body bytes.Buffer
	enc := yaml.NewEncoder(&body)
	enc.SetIndent(2)
	if err := enc.Encode(b); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	head := "# mcpchaos baseline: known findings that do not fail a run (mcpchaos test --baseline FILE).\n" +
		"# A finding not listed here fails the run; an entry that no longer fails is stale and fails it too.\n" +
		"# Each entry: kind, signature (crashes), scenario, method (optional), note (why it is accepted).\n"
	_, err := io.WriteString(w, head+body.String())
	return err
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// ReadBaselineFile reads a baseline file strictly: an unknown key, a
// missing version or scenario, or an unknown kind is an error naming the
// file and line.
func ReadBaselineFile(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the baseline: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %s", path, yamlLine.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), "line $1: "))
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s:1: the file is empty; a baseline starts with version: %d", path, BaselineVersion)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var b Baseline
	if err := dec.Decode(&b); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			m := yamlLine.FindStringSubmatch(te.Errors[0])
			msg := yamlLine.ReplaceAllString(te.Errors[0], "")
			if m != nil {
				return nil, fmt.Errorf("%s:%s: %s (keys: version, findings; an entry: kind, signature, scenario, method, note)", path, m[1], msg)
			}
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	doc := root.Content[0]
	line := func(key string) int {
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value == key {
				return doc.Content[i].Line
			}
		}
		return doc.Line
	}
	if b.Version != BaselineVersion {
		return nil, fmt.Errorf("%s:%d: version: %d; this mcpchaos reads baseline version %d", path, line("version"), b.Version, BaselineVersion)
	}
	var entries []*yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "findings" {
			entries = doc.Content[i+1].Content
		}
	}
	for i, e := range b.Findings {
		at := line("findings")
		if i < len(entries) {
			at = entries[i].Line
		}
		switch {
		case !IsKind(e.Kind):
			return nil, fmt.Errorf("%s:%d: findings[%d].kind: unknown kind %q (kinds: %s)", path, at, i, e.Kind, strings.Join(sortedKinds(), ", "))
		case e.Scenario == "":
			return nil, fmt.Errorf("%s:%d: findings[%d]: no scenario; each entry names the scenario its finding comes from", path, at, i)
		}
	}
	return &b, nil
}

// Apply marks the findings of r the baseline knows as expected (they fail
// nothing) and records the entries that no longer fail as stale, for the
// scenarios r ran (an entry of a scenario not run says nothing); then the
// scenarios' and the report's outcomes follow. file names the baseline in
// what the report says.
func (b *Baseline) Apply(r *Report, file string) {
	known := map[Fingerprint]bool{}
	for _, e := range b.Findings {
		known[e.Fingerprint] = true
	}
	matched := map[Fingerprint]bool{}
	for i := range r.Findings {
		f := &r.Findings[i]
		fp := FingerprintOf(f)
		if f.Severity != SeverityWarning && known[fp] {
			f.Expected, f.Baselined = true, true
			matched[fp] = true
		}
	}
	ran := scenariosRun(r)
	for _, e := range b.Findings {
		if ran[e.Scenario] && !matched[e.Fingerprint] {
			r.StaleBaseline = append(r.StaleBaseline, e.Fingerprint)
		}
	}
	r.BaselineFile = file
	r.rejudge()
}

// rejudge sets each scenario's outcome, and the report's, from findings
// whose expected marks changed.
func (r *Report) rejudge() {
	by := map[string][]Finding{}
	for _, f := range r.Findings {
		by[f.Scenario] = append(by[f.Scenario], f)
	}
	set := func(s *ScenarioResult) {
		if s.Outcome == OutcomePass || s.Outcome == OutcomeFail || s.Outcome == OutcomeIndeterminate {
			s.Outcome = ScenarioOutcome(by[s.Name], s.Indeterminate)
		}
	}
	if r.Baseline != nil {
		set(r.Baseline)
	}
	for i := range r.Scenarios {
		set(&r.Scenarios[i])
	}
	if r.Outcome == OutcomeError {
		return
	}
	r.Outcome = OutcomePass
	if Failing(r.Findings) || len(r.StaleBaseline) > 0 {
		r.Outcome = OutcomeFail
	}
}

func sortedKinds() []string {
	ks := slices.Collect(maps.Keys(kindOrder))
	slices.SortFunc(ks, func(a, b string) int { return kindOrder[a] - kindOrder[b] })
	return ks
}
