package faults

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ScenarioFileVersion is the scenario file format this build reads and
// writes. A file says which it is written in (version: 1), so that a later
// format is refused with a clear error instead of being half understood.
const ScenarioFileVersion = 1

// Workload shapes the probe client of `mcpchaos test` for one scenario. Zero
// fields keep the run's defaults.
type Workload struct {
	// Calls is the least number of tool calls made (probe.Config.MinCalls).
	Calls int
	// Concurrency is how many tool calls are in flight at once.
	Concurrency int
	// Sessions is how many probe sessions work at once against one server
	// (over HTTP): each numbers its requests from 1, as every client does,
	// and carries its own markers, so that what one session's messages leak
	// into another can be told. 0 and 1 are one session.
	Sessions int
	// Hostile is the hostile workload the probe sends after the rest
	// (probe.Config.Hostile): "sample" (the baseline's), "wide" (the
	// hostile-input scenario's), or "" for none.
	Hostile string
}

// IsZero reports whether the workload keeps every default.
func (w Workload) IsZero() bool { return w == Workload{} }

// FindingKinds are the finding kinds a scenario's findings: may list: the
// judge's kinds (package reports). They are spelled here, not imported, so
// that faults stays below reports; a suite test keeps the two in step.
var FindingKinds = []string{"hang", "crash", "lost-response", "duplicate-response", "unknown-response", "zombie", "protocol-violation", "cross-session", "security"}

// HostileWorkloads a scenario's workload may ask for (probe.HostileSample,
// probe.HostileWide; a probe test keeps the two in step).
var HostileWorkloads = []string{"sample", "wide"}

// Eras a scenario may ask for.
var Eras = []string{"stateful", "stateless"}

// Expectations a client scenario may state.
var Expectations = []string{"success", "failure"}

// FileError is one problem in a scenario or case file, where it is: the file,
// the line, the field (as scenarios[1].faults[0]) and what is wrong and
// allowed.
type FileError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *FileError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// ReadScenarioFile reads and parses a scenario file.
func ReadScenarioFile(path string) ([]Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the scenario file: %w", err)
	}
	return ParseScenarioFile(path, data)
}

// ParseScenarioFile parses a scenario file; name is how errors call it. The
// decoding is strict: an unknown key, a value of the wrong type, a missing
// or unknown version, a fault spec that does not parse and a scenario name
// given twice are each one error naming the line and the field.
func ParseScenarioFile(name string, data []byte) (out []Scenario, err error) {
	d := &fileDecoder{file: name}
	root, err := d.document(data)
	if err != nil {
		return nil, err
	}
	fields, err := d.mapping(root, "", "version", []string{"version", "scenarios"}, []string{"version", "scenarios"})
	if err != nil {
		return nil, err
	}
	list := fields["scenarios"]
	if list.Kind != yaml.SequenceNode {
		return nil, d.errf(list, "scenarios", "expected a list of scenarios, got %s", describe(list))
	}
	if len(list.Content) == 0 {
		return nil, d.errf(list, "scenarios", "no scenarios; list at least one, as in\n  scenarios:\n    - name: slow-answers\n      faults: [\"delay:on=s2c:response:tools/call,for=1s\"]")
	}
	defined := map[string]int{}
	for i, n := range list.Content {
		sc, err := d.scenario(n, fmt.Sprintf("scenarios[%d]", i))
		if err != nil {
			return nil, err
		}
		if line, dup := defined[sc.Name]; dup {
			nameNode := d.valueOf(n, "name")
			return nil, d.errf(nameNode, fmt.Sprintf("scenarios[%d].name", i), "scenario %q is already defined at line %d; scenario names must be unique in a file", sc.Name, line)
		}
		defined[sc.Name] = d.valueOf(n, "name").Line
		out = append(out, sc)
	}
	return out, nil
}

// fileDecoder walks a YAML node tree; every error it returns is a
// *FileError with the line of the node at fault.
type fileDecoder struct {
	file string
	what string // "case file"; empty for a scenario file
}

func (d *fileDecoder) kind() string {
	if d.what == "" {
		return "scenario file"
	}
	return d.what
}

func (d *fileDecoder) errf(n *yaml.Node, field, format string, args ...any) *FileError {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	return &FileError{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the errors of the YAML library's parser (parserc.go), as
// opposed to its scanner; see syntax.
var parserProblems = []string{
	"did not find expected <stream-start>", "did not find expected <document start>",
	"found undefined tag handle", "did not find expected node content",
	"did not find expected '-' indicator", "did not find expected key",
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"found duplicate %YAML directive", "found incompatible YAML document", "found duplicate %TAG directive",
}

// document parses data as exactly one YAML document whose root is a mapping.
func (d *fileDecoder) document(data []byte) (root *yaml.Node, err error) {
	// The YAML parser is a third-party library fed untrusted text: should it
	// panic, the file is still the problem, and an error says so.
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, d.errf(nil, "", "the YAML parser failed on this file (%v); check its syntax", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, d.errf(nil, "", "the file is empty; a %s starts with version: 1", d.kind())
		}
		return nil, d.syntax(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, d.errf(&extra, "", "a second YAML document (after ---); a file holds one document")
	} else if !errors.Is(err, io.EOF) {
		return nil, d.syntax(err)
	}
	if len(doc.Content) == 0 {
		return nil, d.errf(&doc, "", "the file is empty; a %s starts with version: 1", d.kind())
	}
	root = doc.Content[0]
	if err := d.noAliases(root); err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, d.errf(root, "", "expected a mapping with version: and the %s's other keys, got %s", d.kind(), describe(root))
	}
	return root, nil
}

func (d *fileDecoder) syntax(err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		// The parser (not the scanner) counts its lines from 0, and names
		// the line where the broken block or flow starts.
		if slices.Contains(parserProblems, m[2]) {
			line++
		}
		return &FileError{File: d.file, Line: line, Msg: "YAML syntax: " + m[2]}
	}
	return &FileError{File: d.file, Line: 1, Msg: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")}
}

// noAliases refuses anchors' aliases: a file is small enough to write out,
// and refusing them keeps a hostile file from expanding exponentially.
func (d *fileDecoder) noAliases(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		return d.errf(n, "", "YAML aliases (*%s) are not supported; write the value out", n.Value)
	}
	for _, c := range n.Content {
		if err := d.noAliases(c); err != nil {
			return err
		}
	}
	return nil
}

// mapping checks that n is a mapping with only allowed keys (each once) and
// the required ones, and returns the values by key. A mapping that has a
// first key (version:) has it checked before the rest, so that a file of a
// later format gets the version error, not a list of unknown keys.
func (d *fileDecoder) mapping(n *yaml.Node, field, first string, allowed, required []string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, d.errf(n, field, "expected a mapping with keys %s, got %s", strings.Join(allowed, ", "), describe(n))
	}
	out := map[string]*yaml.Node{}
	keyLine := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
			return nil, d.errf(k, field, "a key must be a plain name, got %s", describe(k))
		}
		if line, dup := keyLine[k.Value]; dup {
			return nil, d.errf(k, join(field, k.Value), "given twice (first at line %d)", line)
		}
		keyLine[k.Value] = k.Line
		out[k.Value] = v
	}
	if first != "" {
		if v, ok := out[first]; ok {
			if err := d.version(v, join(field, first)); err != nil {
				return nil, err
			}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(allowed, k.Value) {
			return nil, d.errf(k, field, "unknown key %q%s (allowed: %s)", k.Value, suggest(k.Value, allowed), strings.Join(allowed, ", "))
		}
	}
	for _, r := range required {
		if _, ok := out[r]; !ok {
			if r == "version" {
				return nil, d.errf(n, "", "no version; a %s starts with version: 1 (the format it is written in)", d.kind())
			}
			return nil, d.errf(n, field, "no %s:; it is required (keys: %s)", r, strings.Join(allowed, ", "))
		}
	}
	return out, nil
}

func (d *fileDecoder) version(n *yaml.Node, field string) error {
	want := ScenarioFileVersion
	if d.what != "" {
		want = CaseFileVersion
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return d.errf(n, field, "expected the format version %d, got %s", want, describe(n))
	}
	if v, err := strconv.Atoi(n.Value); err != nil || v != want {
		return d.errf(n, field, "unknown version %s; this mcpchaos reads %s version %d (a newer mcpchaos may read this file)", n.Value, d.kind(), want)
	}
	return nil
}

// valueOf returns the value of key in mapping n, or n itself.
func (d *fileDecoder) valueOf(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return n
}

var scenarioKeys = []string{"name", "doc", "era", "faults", "workload", "deadline", "hang-after", "seed", "expect", "findings"}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// scenario decodes one scenario mapping.
func (d *fileDecoder) scenario(n *yaml.Node, field string) (Scenario, error) {
	var sc Scenario
	fields, err := d.mapping(n, field, "", scenarioKeys, []string{"name", "faults"})
	if err != nil {
		return sc, err
	}
	if sc.Name, err = d.str(fields["name"], field+".name"); err != nil {
		return sc, err
	}
	if !validName.MatchString(sc.Name) || len(sc.Name) > 100 {
		return sc, d.errf(fields["name"], field+".name", "%q is not a scenario name; use letters, digits, '.', '_' and '-' (it names transcript files), at most 100 characters", sc.Name)
	}
	if sc.Name == Baseline.Name {
		return sc, d.errf(fields["name"], field+".name", "%q is the no-fault run every matrix starts with; choose another name", sc.Name)
	}
	if v, ok := fields["doc"]; ok {
		if sc.Doc, err = d.str(v, field+".doc"); err != nil {
			return sc, err
		}
	}
	if v, ok := fields["era"]; ok {
		if sc.Era, err = d.choice(v, field+".era", Eras); err != nil {
			return sc, err
		}
	}
	if sc.Faults, err = d.strs(fields["faults"], field+".faults"); err != nil {
		return sc, err
	}
	if len(sc.Faults) == 0 {
		return sc, d.errf(fields["faults"], field+".faults", "no faults; a scenario injects at least one (a run without faults is the baseline every matrix starts with)")
	}
	for i, spec := range sc.Faults {
		if _, err := Parse(spec); err != nil {
			return sc, d.errf(fields["faults"].Content[i], fmt.Sprintf("%s.faults[%d]", field, i), "%v", err)
		}
	}
	if v, ok := fields["workload"]; ok {
		if sc.Workload, err = d.workload(v, field+".workload"); err != nil {
			return sc, err
		}
	}
	if v, ok := fields["deadline"]; ok {
		if sc.Deadline, err = d.duration(v, field+".deadline"); err != nil {
			return sc, err
		}
	}
	if v, ok := fields["hang-after"]; ok {
		if sc.HangAfter, err = d.duration(v, field+".hang-after"); err != nil {
			return sc, err
		}
	}
	if v, ok := fields["seed"]; ok {
		seed, err := d.uint64(v, field+".seed")
		if err != nil {
			return sc, err
		}
		sc.Seed = &seed
	}
	if v, ok := fields["expect"]; ok {
		if sc.Expect, err = d.choice(v, field+".expect", Expectations); err != nil {
			return sc, err
		}
	}
	if v, ok := fields["findings"]; ok {
		if sc.Findings, err = d.strs(v, field+".findings"); err != nil {
			return sc, err
		}
		for i, k := range sc.Findings {
			f := fmt.Sprintf("%s.findings[%d]", field, i)
			if !slices.Contains(FindingKinds, k) {
				return sc, d.errf(v.Content[i], f, "unknown finding kind %q%s (kinds: %s)", k, suggest(k, FindingKinds), strings.Join(FindingKinds, ", "))
			}
			if slices.Index(sc.Findings, k) < i {
				return sc, d.errf(v.Content[i], f, "%q is listed twice", k)
			}
		}
	}
	sc.Source = fmt.Sprintf("%s:%d", d.file, n.Line)
	return sc, nil
}

func (d *fileDecoder) workload(n *yaml.Node, field string) (Workload, error) {
	var w Workload
	fields, err := d.mapping(n, field, "", []string{"calls", "concurrency", "sessions", "hostile"}, nil)
	if err != nil {
		return w, err
	}
	if v, ok := fields["calls"]; ok {
		if w.Calls, err = d.positive(v, field+".calls", 10000); err != nil {
			return w, err
		}
	}
	if v, ok := fields["concurrency"]; ok {
		if w.Concurrency, err = d.positive(v, field+".concurrency", 1000); err != nil {
			return w, err
		}
	}
	if v, ok := fields["sessions"]; ok {
		if w.Sessions, err = d.positive(v, field+".sessions", MaxSessions); err != nil {
			return w, err
		}
	}
	if v, ok := fields["hostile"]; ok {
		if w.Hostile, err = d.choice(v, field+".hostile", HostileWorkloads); err != nil {
			return w, err
		}
	}
	return w, nil
}

func (d *fileDecoder) str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", d.errf(n, field, "expected a string, got %s", describe(n))
	}
	return n.Value, nil
}

func (d *fileDecoder) strs(n *yaml.Node, field string) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, d.errf(n, field, "expected a list of strings, got %s", describe(n))
	}
	out := []string{}
	for i, c := range n.Content {
		s, err := d.str(c, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *fileDecoder) choice(n *yaml.Node, field string, allowed []string) (string, error) {
	s, err := d.str(n, field)
	if err != nil {
		return "", fmt.Errorf("%w (allowed: %s)", err, strings.Join(allowed, ", "))
	}
	if !slices.Contains(allowed, s) {
		return "", d.errf(n, field, "%q is not allowed%s (allowed: %s)", s, suggest(s, allowed), strings.Join(allowed, ", "))
	}
	return s, nil
}

func (d *fileDecoder) positive(n *yaml.Node, field string, most int) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, d.errf(n, field, "expected a whole number from 1 to %d, got %s", most, describe(n))
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil || v < 1 || v > int64(most) {
		return 0, d.errf(n, field, "%s is out of range; give a whole number from 1 to %d", n.Value, most)
	}
	return int(v), nil
}

func (d *fileDecoder) uint64(n *yaml.Node, field string) (uint64, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, d.errf(n, field, "expected a whole number from 0 to %d, got %s", uint64(1<<64-1), describe(n))
	}
	var v uint64
	if err := n.Decode(&v); err != nil {
		return 0, d.errf(n, field, "%s is out of range; give a whole number from 0 to %d", n.Value, uint64(1<<64-1))
	}
	return v, nil
}

func (d *fileDecoder) duration(n *yaml.Node, field string) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return 0, d.errf(n, field, "expected a duration with a unit, as in 10s or 500ms, got %s", describe(n))
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil || v <= 0 {
		return 0, d.errf(n, field, "%q is not a positive duration; write one with a unit, as in 10s or 500ms", n.Value)
	}
	return v, nil
}

// describe names what a node holds, for "expected X, got Y".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.ShortTag() {
	case "!!int":
		return "the number " + n.Value
	case "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	case "!!null":
		return "nothing (null)"
	case "!!str":
		return strconv.Quote(n.Value)
	}
	return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
