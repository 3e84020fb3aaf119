package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Schema names the report format. A reader that meets another value must not
// guess: fields may be added within a version, never change meaning.
const Schema = "mcpchaos.report/v1"

// Finding kinds. These names are a contract (DESIGN.md, "Verdicts"): reports,
// baselines and diffs compare them as strings.
const (
	KindHang              = "hang"
	KindLostResponse      = "lost-response"
	KindDuplicateResponse = "duplicate-response"
	KindUnknownResponse   = "unknown-response"
	KindCrash             = "crash"
	KindZombie            = "zombie"
	KindProtocolViolation = "protocol-violation"
	// KindCrossSession is what crossed between the sessions of a run of
	// several against one server: one session's messages delivered to
	// another, or a fault in one harming another.
	KindCrossSession = "cross-session"
	// KindSecurity is what lets someone other than the user's own client
	// use the server: a page of a foreign site (DNS rebinding).
	KindSecurity = "security"
)

// kindOrder is the order findings are listed in: the order of the verdict
// table in DESIGN.md, which puts what blocks a user (a hang) before what
// merely breaks the protocol.
var kindOrder = map[string]int{
	KindHang:              0,
	KindLostResponse:      1,
	KindDuplicateResponse: 2,
	KindUnknownResponse:   3,
	KindCrash:             4,
	KindZombie:            5,
	KindProtocolViolation: 6,
	KindCrossSession:      7,
	KindSecurity:          8,
}

// IsKind reports whether kind is one of the finding kinds.
func IsKind(kind string) bool {
	_, ok := kindOrder[kind]
	return ok
}

// KindRank is where findings of kind are listed: hangs first, protocol
// violations last.
func KindRank(kind string) int { return kindOrder[kind] }

// Severities. A finding's severity is its rule's (see Rules): what the MCP
// specification allows is at most a warning.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Outcomes of a report (pass, fail, error) and of a scenario (pass, fail,
// indeterminate).
const (
	OutcomePass          = "pass"
	OutcomeFail          = "fail"
	OutcomeError         = "error"
	OutcomeIndeterminate = "indeterminate"
)

// Report is one run of mcpchaos against one target (mcpchaos.report/v1).
type Report struct {
	Schema string `json:"schema"`
	Tool   Tool   `json:"tool"`
	Target Target `json:"target"`
	Seed   uint64 `json:"seed"`
	// Outcome is pass, fail (findings) or error (the run could not judge the
	// target; Error says why).
	Outcome string `json:"outcome"`
	// Baseline is the run without faults, kept apart so that a target broken
	// without faults is not mistaken for one that faults break.
	Baseline  *ScenarioResult  `json:"baseline,omitempty"`
	Scenarios []ScenarioResult `json:"scenarios"`
	Findings  []Finding        `json:"findings"`
	Error     string           `json:"error,omitempty"`
	// BaselineFile is the --baseline the run was judged against, and
	// StaleBaseline its entries that no longer fail (each fails the run:
	// a fixed bug must leave the baseline).
	BaselineFile string `json:"baseline_file,omitempty"`
	// Shard is set on the report of one shard of a matrix (--shard K/N).
	Shard         *Shard        `json:"shard,omitempty"`
	StaleBaseline []Fingerprint `json:"stale_baseline,omitempty"`
	// Explore is set on the report of mcpchaos explore: what it searched.
	Explore *Exploration `json:"explore,omitempty"`
}

// Tool names the program that wrote the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Commit and Go say which build made the report (mcpchaos version), so
	// that a finding can be traced to it; empty when unknown.
	Commit string `json:"commit,omitempty"`
	Go     string `json:"go,omitempty"`
}

// Target is what was tested.
type Target struct {
	Command []string `json:"command"`
	// URL is the upstream of an HTTP session (mcpchaos proxy).
	URL string `json:"url,omitempty"`
	// Role is "client" when Command is a client program under test
	// (test-client): it is run against URL, or against Server, and does
	// not serve anything.
	Role string `json:"role,omitempty"`
	// Server is the command that served the server the client under test
	// was run against (test-client --server, or the server behind its
	// URL), when there was one.
	Server []string `json:"server,omitempty"`
}

// RoleClient marks a target that is a client program under test.
const RoleClient = "client"

// ScenarioResult is one scenario's session, judged.
type ScenarioResult struct {
	Name string `json:"name"`
	Seed uint64 `json:"seed"`
	// Outcome is pass, fail, or indeterminate when the scenario could not
	// fail: the moment its faults wait for never came, or the record is cut
	// short (Indeterminate says which).
	Outcome    string `json:"outcome"`
	DurationMS int64  `json:"duration_ms"`
	// Findings counts this scenario's entries in Report.Findings.
	Findings      int      `json:"findings"`
	Indeterminate []string `json:"indeterminate,omitempty"`
	// Notes say what was not held against the peer because a fault
	// explains it (an answer that could not be read after a half-close),
	// and which findings were left to the baseline, which had them too.
	Notes []string `json:"notes,omitempty"`
	// Transcript is where the session's transcript was written, if it was.
	// In a scenario of several sessions it is the first session's, and
	// Transcripts holds every session's, the first session's first.
	Transcript  string   `json:"transcript,omitempty"`
	Transcripts []string `json:"transcripts,omitempty"`
	// Sessions is how many sessions the scenario ran at once against one
	// server, when more than one.
	Sessions int `json:"sessions,omitempty"`
}

// Finding is one thing the judge holds against the peer under test.
type Finding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	// Rule names the requirement the finding holds the peer to (see Rules
	// and docs/verdicts.md); kind and severity follow from it.
	Rule string `json:"rule,omitempty"`
	// Signature names a crash (python:ClosedResourceError, go:panic,
	// exit:1, ...); it is empty for other kinds.
	Signature string `json:"signature,omitempty"`
	Scenario  string `json:"scenario"`
	Seed      uint64 `json:"seed"`
	// Message is one line a person can act on.
	Message  string     `json:"message"`
	Request  *Request   `json:"request,omitempty"`
	Evidence []Evidence `json:"evidence"`
	// Repro is the command line that replays the scenario with its seed.
	// Always present, as DESIGN.md promises of every finding, even when the
	// session did not record one (a transcript of mcpchaos wrap).
	Repro string `json:"repro"`
	// Expected is set on a finding its scenario lists in its findings: (a
	// known bug pinned by a scenario file): it is reported, and does not
	// fail the run.
	Expected bool `json:"expected,omitempty"`
	// Baselined says the --baseline lists it (Expected is set too).
	Baselined bool `json:"baselined,omitempty"`
	// Sessions, in a scenario of several sessions, are the sessions (1 is
	// the first) whose records the finding was read from: one for a finding
	// of one session's judge (the same finding in several sessions is
	// reported once, naming them all), two or more for one across sessions.
	Sessions []int `json:"sessions,omitempty"`
}

// Request names the request a finding is about.
type Request struct {
	// ID is the JSON text of the id as the peer sent it (7, "a"). It is
	// written into the report as that JSON value, not as a string of it, so
	// that "id": 3 in the report is the id 3 on the wire.
	ID     string
	Method string
	// Tool is the tool a tools/call called, when the finding is about one.
	Tool string
}

type requestJSON struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method,omitempty"`
	Tool   string          `json:"tool,omitempty"`
}

// MarshalJSON writes ID as the JSON value it holds. An ID that is not valid
// JSON (a hand-built finding) is written as a string rather than breaking
// the whole report.
func (r Request) MarshalJSON() ([]byte, error) {
	id := json.RawMessage(r.ID)
	if !json.Valid(id) {
		b, err := json.Marshal(r.ID)
		if err != nil {
			return nil, err
		}
		id = b
	}
	return json.Marshal(requestJSON{ID: id, Method: r.Method, Tool: r.Tool})
}

// UnmarshalJSON keeps the id's JSON text, compacted, so that a round trip
// gives back the ID the judge produced.
func (r *Request) UnmarshalJSON(b []byte) error {
	var v requestJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var buf bytes.Buffer
	if len(v.ID) > 0 {
		if err := json.Compact(&buf, v.ID); err != nil {
			return err
		}
	}
	r.ID, r.Method, r.Tool = buf.String(), v.Method, v.Tool
	return nil
}

// Evidence is one transcript event behind a finding, by its seq, with an
// excerpt small enough to read in a report.
type Evidence struct {
	Seq  int64  `json:"seq"`
	TUS  int64  `json:"t_us"`
	Type string `json:"type"`
	Dir  string `json:"dir,omitempty"`
	// Excerpt is the frame's bytes (cut at maxExcerpt), the stderr lines of
	// a crash, or a short description of a non-frame event.
	Excerpt string `json:"excerpt"`
	// Session, in a scenario of several sessions, is the session whose
	// transcript Seq numbers an event of (1 is the first).
	Session int `json:"session,omitempty"`
}

// Where names the event: its seq, and in a scenario of several sessions the
// session whose transcript holds it.
func (e Evidence) Where() string {
	if e.Session > 0 {
		return fmt.Sprintf("session %d seq %d", e.Session, e.Seq)
	}
	return fmt.Sprintf("seq %d", e.Seq)
}

// WriteJSON writes the report as indented JSON. Empty lists are written as
// [] rather than null, so consumers can iterate without a nil check.
func (r *Report) WriteJSON(w io.Writer) error {
	c := *r
	if c.Schema == "" {
		c.Schema = Schema
	}
	if c.Scenarios == nil {
		c.Scenarios = []ScenarioResult{}
	}
	if c.Target.Command == nil {
		c.Target.Command = []string{}
	}
	c.Findings = make([]Finding, len(r.Findings))
	for i, f := range r.Findings {
		if f.Evidence == nil {
			f.Evidence = []Evidence{}
		}
		c.Findings[i] = f
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// ReadReport decodes a report written by WriteJSON. It refuses other schemas,
// because a field of another version may not mean what v1 says it means.
func ReadReport(r io.Reader) (*Report, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the report: %w", err)
	}
	var head struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("the report is not JSON: %w (is it an mcpchaos --report file?)", err)
	}
	switch {
	case head.Schema == nil:
		return nil, fmt.Errorf("the report has no \"schema\" member; expected %q (is it an mcpchaos --report file?)", Schema)
	case *head.Schema != Schema:
		return nil, fmt.Errorf("the report's schema is %q; this mcpchaos reads %q (use the mcpchaos version that wrote it)", *head.Schema, Schema)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("the report does not fit %s: %w", Schema, err)
	}
	return &rep, nil
}

// ExitCode is the process exit status the report calls for: 2 when the run
// ended in error, 1 when there are error findings (or warnings with strict),
// 0 otherwise.
func (r *Report) ExitCode(strict bool) int {
	if r.Outcome == OutcomeError {
		return 2
	}
	if len(r.StaleBaseline) > 0 {
		return 1
	}
	for _, f := range r.Findings {
		if f.Fails() || strict && !f.Expected {
			return 1
		}
	}
	return 0
}

// ScenarioOutcome is a scenario's outcome: fail for an error finding,
// indeterminate when it could not fail (indeterminate says why), else pass;
// warnings alone pass (they are still listed).
func ScenarioOutcome(findings []Finding, indeterminate []string) string {
	switch {
	case Failing(findings):
		return OutcomeFail
	case len(indeterminate) > 0:
		return OutcomeIndeterminate
	}
	return OutcomePass
}

// Failing reports whether any finding is an error: warnings alone (a
// response lost while the server was shutting down) do not fail a run
// unless --strict asks for it (ExitCode). Expected findings do not fail it.
func Failing(fs []Finding) bool {
	for i := range fs {
		if fs[i].Fails() {
			return true
		}
	}
	return false
}

// Fails reports whether f fails its run without --strict: an error that
// neither its scenario nor the --baseline expects.
func (f *Finding) Fails() bool { return f.Severity != SeverityWarning && !f.Expected }
