package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// CaseFileVersion is the regression case format this build reads and writes.
const CaseFileVersion = 1

// Case is one failing scenario run, saved by mcpchaos test --save-case so
// that mcpchaos test --cases can replay it: the scenario, the seed, the
// target, the finding kinds it produced and the fault decisions taken.
type Case struct {
	// Scenario is what ran: name, doc, faults, era, workload, deadline,
	// expect. Its Seed and Findings are unset (the case's own fields say
	// them).
	Scenario Scenario
	Seed     uint64
	// Command is the target the run was against: the server for a case of
	// mcpchaos test, the client program for one of test-client.
	Command []string
	// Server is, for a case of test-client, the server behind the client
	// program; empty for a case of mcpchaos test, and for one of test-client
	// whose server at URL was already up.
	Server []string
	// Client says the case was saved by test-client (its Command is the
	// client program), not by test.
	Client bool
	// URL is the MCP endpoint of an HTTP server (test --url, test-client
	// --server-url), password redacted; empty over stdio. With a URL,
	// Command (for test) or Server (for test-client) is the command that
	// serves it, or empty when the server was already up.
	URL string
	// Calls are the explicit tool calls of the probe workload (mcpchaos test
	// --call NAME=JSON), in order; nil means every listed tool, arguments
	// from its schema. SkipTools are the tools never called (--skip-tool).
	// A case of test-client has neither: its client program is the workload.
	Calls     []ToolCall
	SkipTools []string
	// Findings are the kinds of the error findings, sorted, each once.
	Findings []string
	// Decisions are the faults that fired, in order, with the message each
	// fired on: a replay that takes other decisions did not recreate the
	// moment.
	Decisions []Decision
}

// ToolCall is one explicit tool call of a probe workload.
type ToolCall struct {
	Tool string
	// Arguments is the JSON arguments object as given (the text after = in
	// --call NAME=JSON): the replay sends the very same bytes.
	Arguments string
}

// Decision is one fault firing, from a fault event of the transcript.
type Decision struct {
	Label  string // the fault's label in the transcript (eof#1)
	Spec   string // its spec
	Action string // what it did (the family name)
	// Seq is the transcript sequence number of the message it fired on;
	// Dir, Kind, Method and ID describe that message (empty for a firing
	// that is not on a message, such as a stall ending).
	Seq    int64
	Dir    string
	Kind   string
	Method string
	ID     string
	Detail string
}

// Same reports whether two decisions are the same choice: the same fault
// did the same thing to the same kind of message. Sequence numbers, ids and
// details are left out, as the peer's timing may move them.
func (d Decision) Same(o Decision) bool {
	return d.Label == o.Label && d.Action == o.Action && d.Dir == o.Dir && d.Kind == o.Kind && d.Method == o.Method
}

type caseYAML struct {
	Version   int            `yaml:"version"`
	Scenario  scenarioYAML   `yaml:"scenario"`
	Seed      uint64         `yaml:"seed"`
	By        string         `yaml:"by"`
	Command   []string       `yaml:"command,flow"`
	Server    []string       `yaml:"server,omitempty,flow"`
	URL       string         `yaml:"url,omitempty"`
	Calls     []callYAML     `yaml:"calls,omitempty"`
	SkipTools []string       `yaml:"skip-tools,omitempty,flow"`
	Findings  []string       `yaml:"findings,flow"`
	Decisions []decisionYAML `yaml:"decisions"`
}

type scenarioYAML struct {
	Name     string        `yaml:"name"`
	Doc      string        `yaml:"doc,omitempty"`
	Era      string        `yaml:"era,omitempty"`
	Faults   []string      `yaml:"faults"`
	Workload *workloadYAML `yaml:"workload,omitempty,flow"`
	Deadline string        `yaml:"deadline,omitempty"`
	// HangAfter is a client case's hang horizon, so that a replay waits
	// as long as the run it replays did.
	HangAfter string `yaml:"hang-after,omitempty"`
	Expect    string `yaml:"expect,omitempty"`
}

type workloadYAML struct {
	Calls       int    `yaml:"calls,omitempty"`
	Concurrency int    `yaml:"concurrency,omitempty"`
	Sessions    int    `yaml:"sessions,omitempty"`
	Hostile     string `yaml:"hostile,omitempty"`
}

// callYAML keeps the arguments as the JSON text they were given in, not as
// a YAML mapping: the file shows what the flag said, and the replay sends
// the same bytes (key order, number spelling and all).
type callYAML struct {
	Tool      string `yaml:"tool"`
	Arguments string `yaml:"arguments"`
}

type decisionYAML struct {
	Label  string `yaml:"label"`
	Spec   string `yaml:"spec"`
	Action string `yaml:"action"`
	Seq    int64  `yaml:"seq,omitempty"`
	Dir    string `yaml:"dir,omitempty"`
	Kind   string `yaml:"kind,omitempty"`
	Method string `yaml:"method,omitempty"`
	ID     string `yaml:"id,omitempty"`
	Detail string `yaml:"detail,omitempty"`
}

// MarshalCase renders a case file.
func MarshalCase(c Case) ([]byte, error) {
	sc := scenarioYAML{Name: c.Scenario.Name, Doc: c.Scenario.Doc, Era: c.Scenario.Era, Faults: c.Scenario.Faults, Expect: c.Scenario.Expect}
	if !c.Scenario.Workload.IsZero() {
		sc.Workload = &workloadYAML{Calls: c.Scenario.Workload.Calls, Concurrency: c.Scenario.Workload.Concurrency, Sessions: c.Scenario.Workload.Sessions, Hostile: c.Scenario.Workload.Hostile}
	}
	if c.Scenario.Deadline > 0 {
		sc.Deadline = c.Scenario.Deadline.String()
	}
	if c.Scenario.HangAfter > 0 {
		sc.HangAfter = c.Scenario.HangAfter.String()
	}
	client := c.Client || len(c.Server) > 0
	out := caseYAML{Version: CaseFileVersion, Scenario: sc, Seed: c.Seed, By: byTest, Command: c.Command, Server: c.Server, URL: c.URL, SkipTools: c.SkipTools, Findings: c.Findings}
	if client {
		out.By = byTestClient
	}
	if out.Command == nil {
		out.Command = []string{}
	}
	for _, call := range c.Calls {
		out.Calls = append(out.Calls, callYAML(call))
	}
	if out.Findings == nil {
		out.Findings = []string{}
	}
	for _, d := range c.Decisions {
		out.Decisions = append(out.Decisions, decisionYAML(d))
	}
	if out.Decisions == nil {
		out.Decisions = []decisionYAML{}
	}
	var body bytes.Buffer
	enc := yaml.NewEncoder(&body)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	replay := "mcpchaos test --cases DIR [-- SERVER]"
	switch {
	case client && c.URL != "":
		replay = "mcpchaos test-client --cases DIR [--server-url URL] [--server SERVER] [-- CLIENT]"
	case client:
		replay = "mcpchaos test-client --cases DIR [--server SERVER] [-- CLIENT]"
	case c.URL != "":
		replay = "mcpchaos test --cases DIR [--url URL] [--header NAME:VALUE]... [-- SERVER]"
	}
	head := fmt.Sprintf("# mcpchaos regression case: scenario %s failed with seed %d.\n# Replay every case of this directory with: %s\n", c.Scenario.Name, c.Seed, replay)
	return append([]byte(head), body.Bytes()...), nil
}

// The commands that save cases, as the by: key names them.
const (
	byTest       = "test"
	byTestClient = "test-client"
)

// ReadCaseFile reads and parses a case file.
func ReadCaseFile(path string) (Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Case{}, fmt.Errorf("cannot read the case file: %w", err)
	}
	return ParseCaseFile(path, data)
}

var (
	caseKeys     = []string{"version", "scenario", "seed", "by", "command", "server", "url", "calls", "skip-tools", "findings", "decisions"}
	callKeys     = []string{"tool", "arguments"}
	decisionKeys = []string{"label", "spec", "action", "seq", "dir", "kind", "method", "id", "detail"}
)

// ParseCaseFile parses a case file as strictly as a scenario file: every
// error is a *FileError naming the line and the field.
func ParseCaseFile(name string, data []byte) (c Case, err error) {
	d := &fileDecoder{file: name, what: "case file"}
	root, err := d.document(data)
	if err != nil {
		return c, err
	}
	fields, err := d.mapping(root, "", "version", caseKeys, []string{"version", "scenario", "seed", "command", "findings"})
	if err != nil {
		return c, err
	}
	if c.Scenario, err = d.scenario(fields["scenario"], "scenario"); err != nil {
		return c, err
	}
	for key, set := range map[string]bool{"seed": c.Scenario.Seed != nil, "findings": c.Scenario.Findings != nil} {
		if set {
			return c, d.errf(d.valueOf(fields["scenario"], key), "scenario."+key, "a case keeps %s: at its top level, not in its scenario", key)
		}
	}
	c.Scenario.Source = ""
	if c.Seed, err = d.uint64(fields["seed"], "seed"); err != nil {
		return c, err
	}
	if c.Command, err = d.strs(fields["command"], "command"); err != nil {
		return c, err
	}
	if v, ok := fields["server"]; ok {
		if c.Server, err = d.strs(v, "server"); err != nil {
			return c, err
		}
		if len(c.Server) == 0 {
			return c, d.errf(v, "server", "empty; leave server: out of a case of mcpchaos test, and out of one of test-client whose server was already up")
		}
	}
	if c.Client, err = d.savedBy(fields, len(c.Server) > 0); err != nil {
		return c, err
	}
	if v, ok := fields["url"]; ok {
		if c.URL, err = d.str(v, "url"); err != nil {
			return c, err
		}
		if u, perr := url.Parse(c.URL); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, d.errf(v, "url", "%q is not the http:// or https:// URL of an MCP endpoint, as in http://127.0.0.1:3000/mcp", c.URL)
		}
	}
	if len(c.Command) == 0 && (c.Client || c.URL == "") {
		what := "the command it ran against, as in [python, server.py]"
		if c.Client {
			what = "the client program it ran, as in [python, client.py]"
		}
		return c, d.errf(fields["command"], "command", "empty; a case records %s", what)
	}
	if c.Calls, c.SkipTools, err = d.probeWorkload(fields, c.Client); err != nil {
		return c, err
	}
	if c.Findings, err = d.strs(fields["findings"], "findings"); err != nil {
		return c, err
	}
	for i, k := range c.Findings {
		if !slices.Contains(FindingKinds, k) && k != ExpectationKind {
			return c, d.errf(fields["findings"].Content[i], fmt.Sprintf("findings[%d]", i), "unknown finding kind %q%s (kinds: %s)", k, suggest(k, FindingKinds), strings.Join(FindingKinds, ", "))
		}
	}
	if v, ok := fields["decisions"]; ok {
		if v.Kind != yaml.SequenceNode {
			return c, d.errf(v, "decisions", "expected a list of fault decisions, got %s", describe(v))
		}
		for i, n := range v.Content {
			dec, err := d.decision(n, fmt.Sprintf("decisions[%d]", i))
			if err != nil {
				return c, err
			}
			c.Decisions = append(c.Decisions, dec)
		}
	}
	return c, nil
}

// savedBy decodes by:, the command that saved the case. A version 1 file
// may predate it: then a case with a server: is one of test-client.
func (d *fileDecoder) savedBy(fields map[string]*yaml.Node, hasServer bool) (client bool, err error) {
	v, ok := fields["by"]
	if !ok {
		return hasServer, nil
	}
	by, err := d.str(v, "by")
	if err != nil {
		return false, err
	}
	switch by {
	case byTestClient:
		return true, nil
	case byTest:
		if hasServer {
			return false, d.errf(fields["server"], "server", "a case of mcpchaos test has no server: (its command: is the server); remove it, or write by: test-client")
		}
		return false, nil
	}
	return false, d.errf(v, "by", "unknown command %q; a case is saved by test or test-client", by)
}

// probeWorkload decodes a case's calls: and skip-tools:, the probe workload of a
// case of mcpchaos test. Both are optional (a version 1 file may predate
// them): absent means every listed tool, arguments from its schema.
func (d *fileDecoder) probeWorkload(fields map[string]*yaml.Node, client bool) (calls []ToolCall, skips []string, err error) {
	for _, key := range []string{"calls", "skip-tools"} {
		if v, ok := fields[key]; ok && client {
			return nil, nil, d.errf(v, key, "a case of test-client has no probe workload: its client program makes the calls; remove %s:", key)
		}
	}
	if v, ok := fields["calls"]; ok {
		if v.Kind != yaml.SequenceNode {
			return nil, nil, d.errf(v, "calls", "expected a list of tool calls, as in [{tool: echo, arguments: '{\"text\":\"hi\"}'}], got %s", describe(v))
		}
		if len(v.Content) == 0 {
			return nil, nil, d.errf(v, "calls", "empty; leave calls: out to call every tool with arguments from its schema")
		}
		for i, n := range v.Content {
			call, err := d.call(n, fmt.Sprintf("calls[%d]", i))
			if err != nil {
				return nil, nil, err
			}
			calls = append(calls, call)
		}
	}
	if v, ok := fields["skip-tools"]; ok {
		if skips, err = d.strs(v, "skip-tools"); err != nil {
			return nil, nil, err
		}
		if len(skips) == 0 {
			return nil, nil, d.errf(v, "skip-tools", "empty; leave skip-tools: out to skip no tool")
		}
		for i, s := range skips {
			if s == "" {
				return nil, nil, d.errf(v.Content[i], fmt.Sprintf("skip-tools[%d]", i), "empty tool name")
			}
		}
	}
	return calls, skips, nil
}

func (d *fileDecoder) call(n *yaml.Node, field string) (ToolCall, error) {
	var c ToolCall
	fields, err := d.mapping(n, field, "", callKeys, callKeys)
	if err != nil {
		return c, err
	}
	if c.Tool, err = d.str(fields["tool"], field+".tool"); err != nil {
		return c, err
	}
	if c.Tool == "" {
		return c, d.errf(fields["tool"], field+".tool", "empty; give the name of the tool to call")
	}
	v := fields["arguments"]
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
		return c, d.errf(v, field+".arguments", "expected the JSON arguments object as a string, as in arguments: '{\"text\":\"hi\"}', got %s", describe(v))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v.Value), &obj); err != nil || obj == nil {
		why := "it is not a JSON object"
		if err != nil {
			why += ": " + err.Error()
		}
		return c, d.errf(v, field+".arguments", "%s; give a JSON object, as in '{\"text\":\"hi\"}' or '{}'", why)
	}
	c.Arguments = v.Value
	return c, nil
}

// ExpectationKind is the finding kind of a run whose findings differ from
// the ones its scenario expects (Scenario.Findings).
const ExpectationKind = "expectation"

func (d *fileDecoder) decision(n *yaml.Node, field string) (Decision, error) {
	var dec Decision
	fields, err := d.mapping(n, field, "", decisionKeys, []string{"label", "spec", "action"})
	if err != nil {
		return dec, err
	}
	strFields := map[string]*string{"label": &dec.Label, "spec": &dec.Spec, "action": &dec.Action, "dir": &dec.Dir,
		"kind": &dec.Kind, "method": &dec.Method, "id": &dec.ID, "detail": &dec.Detail}
	for _, key := range decisionKeys {
		v, ok := fields[key]
		if !ok {
			continue
		}
		if key == "seq" {
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
				return dec, d.errf(v, field+".seq", "expected a transcript sequence number, got %s", describe(v))
			}
			if dec.Seq, err = strconv.ParseInt(v.Value, 0, 64); err != nil || dec.Seq < 0 {
				return dec, d.errf(v, field+".seq", "%s is out of range; give a whole number >= 0", v.Value)
			}
			continue
		}
		if *strFields[key], err = d.str(v, field+"."+key); err != nil {
			return dec, err
		}
	}
	return dec, nil
}
