package judge

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/mcpschema"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// OfficialSchema holds what the server writes to the official MCP JSON
// schema of the session's revision (internal/mcpschema): the result of
// each request whose method the revision defines, each notification, and
// each request of its own (sampling, roots, elicitation, ping).
// The revision is the one the session negotiated: the initialize result's
// protocolVersion, or the protocol version a request's _meta declares in
// the stateless era.
var OfficialSchema = &Checker{
	Name:  "official-schema",
	Doc:   "the server's results and notifications against the official MCP JSON schema of the session's revision",
	Reads: []string{wire.EventReceived, wire.EventInjected, wire.EventForwarded},
	Rules: []string{reports.RuleSchema},
	New:   func() Check { return newOfficialSchema("s2c") },
}

// OfficialSchemaClient holds a client program under test to the same
// schema: its requests, its results of the server's requests (roots,
// sampling, elicitation, ping) and its notifications.
var OfficialSchemaClient = &Checker{
	Name:   "official-schema-client",
	Doc:    "the client's requests, results and notifications against the official MCP JSON schema of the session's revision",
	Reads:  []string{wire.EventReceived, wire.EventInjected, wire.EventForwarded},
	Rules:  []string{reports.RuleSchema},
	New:    func() Check { return newOfficialSchema("c2s") },
	Client: true,
}

func newOfficialSchema(out string) *officialSchema {
	in := "c2s"
	if out == in {
		in = "s2c"
	}
	return &officialSchema{out: out, in: in, asked: map[string]askedRequest{}, early: map[string]wire.Event{}}
}

// askedRequest is a request to the peer under test awaiting its answer: its
// method, and the revision its _meta declares (the stateless era's), if
// any.
type askedRequest struct{ method, version string }

// Answers recorded before their request are rare (one HTTP exchange's
// two sides racing in the record): a few, and not huge ones, are kept.
const (
	maxEarlyAnswers     = 64
	maxEarlyAnswerBytes = 1 << 20
)

// ambiguous marks an id two requests in flight shared.
const ambiguous = "\x00ambiguous"

// unsaidVersion judges a record that never shows the handshake (a wrap
// transcript started late, a hand-made one): the last stateful revision.
const unsaidVersion = "2025-11-25"

type officialSchema struct {
	// out is the direction the peer under test writes in, in the other.
	out, in string
	// initID is the id of the initialize request the peer under test sent
	// (a client's), whose answer names the session's revision.
	initID string
	// asked are the methods of the requests to the peer under test, by
	// id, until answered.
	asked map[string]askedRequest
	// early are answers recorded before their request (the HTTP proxy
	// records each side as it goes), until the request comes.
	early map[string]wire.Event
	// seen counts the messages of each method and kind (sampled).
	seen map[string]int
	// version is the session's protocol version; requested is the one the
	// client's initialize asked for, which stands when the server's answer
	// names none.
	version, requested string
	breaches           map[string]*schemaBreach
	order              []string
}

func (c *officialSchema) Event(e *wire.Event) {
	switch {
	case e.Type == wire.EventForwarded:
		if id, ok := rewrittenRequest(e, c.in); ok {
			if _, taken := c.asked[id]; taken {
				c.asked[id] = askedRequest{method: ambiguous}
			}
		}
	case e.Kind == "request":
		// In the stateless era each request says its revision; one that
		// says none is answered as the stateful era's (mcp-go does).
		declared := declaredVersion(e)
		if c.version == "" {
			c.version = declared
		}
		if e.Method == "initialize" {
			c.requested = requestedVersion(e)
		}
		if e.Dir == c.out {
			// The peer's own request: a server's (sampling, roots,
			// elicitation, ping), a client program's (all of its work).
			if e.Method == "initialize" {
				// Judged by the revision it asks for.
				c.initID, declared = e.ID, c.requested
			}
			if c.sampled(e.Method + "\x00request") {
				r := c.revisionOf(declared)
				c.judge(r.Name(), e.Method, "request", r.Request(e.Method, []byte(e.Raw)), e)
			}
			return
		}
		a := askedRequest{method: e.Method, version: declared}
		if answer, ok := c.early[e.ID]; ok {
			delete(c.early, e.ID)
			c.result(a, &answer)
			return
		}
		if len(c.asked) < maxOpenAsked {
			c.asked[e.ID] = a
		}
	case e.Dir == c.in && e.Kind == "response" && e.ID == c.initID && c.initID != "":
		// The server's answer to a client under test's initialize.
		c.initID = ""
		c.negotiated(e)
	case e.Dir == c.out && e.Kind == "response":
		a, ok := c.asked[e.ID]
		if !ok {
			// mcpchaos's liveness probes are not read here; their
			// answers never find a request.
			if len(c.early) < maxEarlyAnswers && len(e.Raw) <= maxEarlyAnswerBytes && !strings.HasPrefix(e.ID, wire.ProbeIDPrefix) {
				c.early[e.ID] = *e
			}
			return
		}
		if a.method == ambiguous {
			return
		}
		delete(c.asked, e.ID)
		c.result(a, e)
	case e.Dir == c.out && e.Kind == "error":
		delete(c.asked, e.ID)
	case e.Dir == c.out && e.Kind == "notification":
		if c.sampled(e.Method + "\x00notification") {
			r := c.revision()
			c.judge(r.Name(), e.Method, "notification", r.Notification(e.Method, []byte(e.Raw)), e)
		}
	}
}

// negotiated takes the session's revision from an initialize result: its
// protocolVersion, or the one asked for when it names none.
func (c *officialSchema) negotiated(e *wire.Event) {
	var res struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	c.version = c.requested
	if json.Unmarshal([]byte(e.Raw), &res) == nil && res.Result.ProtocolVersion != "" {
		c.version = res.Result.ProtocolVersion
	}
}

// result judges e, the answer to request a.
func (c *officialSchema) result(a askedRequest, e *wire.Event) {
	if a.method == "initialize" {
		c.negotiated(e)
	}
	if c.sampled(a.method + "\x00result") {
		r := c.revisionOf(a.version)
		c.judge(r.Name(), a.method, "result", r.Result(a.method, []byte(e.Raw)), e)
	}
}

// revisionOf is the schema a message is judged by: the revision its
// request declared (the stateless era's), the stateful era's last for a
// request that declares none in a stateless session, or the session's.
func (c *officialSchema) revisionOf(declared string) *mcpschema.Revision {
	if declared != "" {
		if r, ok := mcpschema.For(declared); ok {
			return r
		}
	}
	if c.stateless() {
		r, _ := mcpschema.For(unsaidVersion)
		return r
	}
	return c.revision()
}

// Validation costs tens of microseconds a message, and one server writes
// the messages of one method alike: the first of each method are all
// checked, then one in sampleEvery, so that a transcript of a million
// progress notifications is judged in seconds, not minutes.
const (
	checkFirst  = 64
	sampleEvery = 1000
)

// stateless says the session's revision is one without the initialize
// handshake, whose requests each declare it.
func (c *officialSchema) stateless() bool { return c.version >= "2026-07-28" }

// sampled says the next message of key is to be validated.
func (c *officialSchema) sampled(key string) bool {
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	n := c.seen[key]
	if len(c.seen) < maxOpenAsked || n > 0 {
		c.seen[key] = n + 1
	}
	return n < checkFirst || n%sampleEvery == 0
}

// revision is the schema of the session's revision (unsaidVersion's until
// the session says which).
func (c *officialSchema) revision() *mcpschema.Revision {
	r, _ := mcpschema.For(cmp.Or(c.version, unsaidVersion))
	return r
}

// declaredVersion is the protocol version a request of the stateless era
// declares in its _meta.
func declaredVersion(e *wire.Event) string {
	b, err := e.Bytes()
	if err != nil {
		return ""
	}
	return stringValue(member(member(member(b, "params"), "_meta"), "io.modelcontextprotocol/protocolVersion"))
}

// requestedVersion is the protocol version an initialize request asks for.
func requestedVersion(e *wire.Event) string {
	b, err := e.Bytes()
	if err != nil {
		return ""
	}
	return stringValue(member(member(b, "params"), "protocolVersion"))
}

func stringValue(v []byte) string {
	var s string
	if kindOf(v) != '"' || json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

func (c *officialSchema) judge(revision, method, what string, ps []mcpschema.Problem, e *wire.Event) {
	if len(ps) == 0 || e.RawBase64 != "" || !validJSON(bytesOf(e.Raw)) {
		// A frame that is not UTF-8 or not JSON is the not-an-mcp-message
		// rule's (protocol.go).
		return
	}
	// One finding per method and first problem: the same fault in every
	// answer is counted, a different one is a finding of its own.
	key := method + "\x00" + what + "\x00" + ps[0].String()
	if c.breaches == nil {
		c.breaches = map[string]*schemaBreach{}
	}
	b := c.breaches[key]
	if b == nil {
		if len(c.breaches) >= maxViolationKinds {
			return
		}
		b = &schemaBreach{tool: method, id: e.ID, revision: revision, problems: ps}
		c.breaches[key] = b
		c.order = append(c.order, key)
	}
	b.count++
	if len(b.evidence) < maxViolationEvidence {
		b.evidence = append(b.evidence, evidenceOf(e))
	}
}

func (c *officialSchema) Findings() []reports.Finding {
	var out []reports.Finding
	for _, key := range c.order {
		b := c.breaches[key]
		method, rest, _ := strings.Cut(key, "\x00")
		what, _, _ := strings.Cut(rest, "\x00")
		var problems []string
		for _, p := range b.problems {
			problems = append(problems, p.String())
		}
		f := reports.NewFinding(reports.RuleSchema,
			fmt.Sprintf("%d %s of %s %s the MCP %s schema: %s", b.count, words.Plural(b.count, what, what+"s"), method,
				words.Plural(b.count, "breaks", "break"), b.revision, strings.Join(problems, "; ")), b.evidence)
		if what == "result" {
			f.Request = &reports.Request{ID: b.id, Method: method}
		}
		out = append(out, f)
	}
	return out
}
