package judge

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The protocol checks read every frame the peer wrote: what the classifier
// called invalid, what it let through but is not JSON after all (it does not
// look inside strings), and a minimal MCP schema for the results whose
// request method is known. A problem is reported once per session with a
// count: a server that logs to stdout does it on every request.

const (
	maxViolationKinds    = 64
	maxViolationEvidence = 3
)

type violation struct {
	rule     string
	msg      string
	count    int
	req      *reports.Request
	evidence []reports.Evidence
}

type protocolChecks struct {
	byKey map[string]*violation
	order []string
	extra int
}

func (p *protocolChecks) init() { p.byKey = map[string]*violation{} }

func (p *protocolChecks) add(key, msg string, e *wire.Event, req *reports.Request) {
	rule := reports.RuleNotMCP
	if strings.HasPrefix(key, "schema:") {
		rule = reports.RuleSchema
	}
	v := p.byKey[key]
	if v == nil {
		if len(p.byKey) >= maxViolationKinds {
			p.extra++
			return
		}
		v = &violation{rule: rule, msg: msg, req: req}
		p.byKey[key] = v
		p.order = append(p.order, key)
	}
	v.count++
	if len(v.evidence) < maxViolationEvidence {
		v.evidence = append(v.evidence, evidenceOf(e))
	}
}

// check judges one frame the peer wrote; method is the method of the
// request it answers, when it answers one.
func (p *protocolChecks) check(j *Judger, e *wire.Event, method string) {
	switch {
	case e.Kind == "invalid":
		key, msg := invalidWords(e.Problem, j.frameSource())
		p.add("invalid:"+key, msg, e, nil)
		return
	case e.RawBase64 != "":
		p.add("utf8", "a frame that is not valid UTF-8", e, nil)
		return
	}
	raw := bytesOf(e.Raw)
	if !validJSON(raw) {
		p.add("json", "a frame that is not valid JSON inside a string (a raw control character or a bad escape)", e, nil)
		return
	}
	// What a frame says is the official-schema checkers' to judge
	// (officialschema.go), for either peer.
}

// bytesOf views a string's bytes without copying them, for the checks that
// only read: copying every frame the peer writes would be most of the
// judge's allocations.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// frameSource says where a peer's frames travel, so that a problem is
// named where its author will look for it.
type frameSource uint8

const (
	serverStdout frameSource = iota
	// clientOutput is a client's output to the server, which is not
	// necessarily its stdout.
	clientOutput
	// httpMessage is a POST body, a JSON response body or an SSE event's
	// data: on HTTP there are no lines and no stdout.
	httpMessage
)

func (j *Judger) frameSource() frameSource {
	switch {
	case j.http:
		return httpMessage
	case j.cl != nil:
		return clientOutput
	}
	return serverStdout
}

// invalidWords groups the classifier's problems into kinds a person can act
// on: "not JSON: unexpected 'x'" and "not JSON: unexpected 'y'" are one
// problem.
func invalidWords(problem string, from frameSource) (key, msg string) {
	switch {
	case problem == "not a JSON object" && from == httpMessage:
		return problem, "a body or SSE event whose data is not a JSON object (each carries one JSON-RPC message)"
	case problem == "not a JSON object" && from == clientOutput:
		return problem, "non-JSON in its output to the server: a line that is not a JSON object, typically logging into the transport"
	case problem == "not a JSON object":
		return problem, "non-JSON on stdout: a line that is not a JSON object, typically logging to stdout"
	case strings.HasPrefix(problem, "not JSON") && from == httpMessage:
		return "not JSON", "a body or SSE event whose data is not valid JSON (" + problem + ")"
	case strings.HasPrefix(problem, "not JSON"):
		return "not JSON", "a line that is not valid JSON (" + problem + ")"
	case problem == "empty line" && from == httpMessage:
		return problem, "an empty body or SSE event data where a JSON-RPC message belongs"
	case problem == "empty line" && from == clientOutput:
		return problem, "an empty line in its output to the server"
	case problem == "empty line":
		return problem, "an empty line on stdout"
	case problem == `"jsonrpc" is not "2.0"`:
		return problem, `a message with a wrong or missing "jsonrpc" version (it must be "2.0")`
	case strings.HasPrefix(problem, "JSON-RPC batch"):
		return "batch", "a JSON-RPC batch (arrays are not MCP messages)"
	case problem == "":
		return "unclassified", "a frame that is not a JSON-RPC message"
	}
	return problem, "a frame that is not a JSON-RPC message: " + problem
}

func isNumber(c byte) bool { return c == '-' || (c >= '0' && c <= '9') }

// checkResult is the minimal MCP schema of the results the judge knows;
// it returns what is wrong, or "".
func checkResult(method string, raw []byte) string {
	switch method {
	case "initialize", "tools/list", "tools/call":
	default:
		return ""
	}
	res := member(raw, "result")
	if kindOf(res) != '{' {
		return "is not an object"
	}
	switch method {
	case "initialize":
		if kindOf(member(res, "protocolVersion")) != '"' {
			return "has no protocolVersion string"
		}
		if kindOf(member(res, "capabilities")) != '{' {
			return "has no capabilities object"
		}
		info := member(res, "serverInfo")
		if kindOf(info) != '{' || kindOf(member(info, "name")) != '"' {
			return "has no serverInfo object with a name"
		}
	case "tools/list":
		problem, i := "", 0
		ok := elements(member(res, "tools"), func(tool []byte) bool {
			switch {
			case kindOf(tool) != '{':
				problem = fmt.Sprintf("has a tool that is not an object (tools[%d])", i)
			case kindOf(member(tool, "name")) != '"':
				problem = "has a tool without a name string"
			case kindOf(member(tool, "inputSchema")) != '{':
				problem = "has a tool without an inputSchema object"
			}
			i++
			return problem == ""
		})
		if !ok {
			return "has no tools array"
		}
		return problem
	case "tools/call":
		if string(member(res, "resultType")) == `"input_required"` {
			// The stateless revision's multi-round-trip answer: it asks
			// the client for input (inputRequests), and the retried call
			// carries the content.
			if kindOf(member(res, "inputRequests")) != '{' {
				return "is input_required with no inputRequests object"
			}
			return ""
		}
		if task := member(res, "task"); kindOf(task) == '{' {
			// A CreateTaskResult: the answer to a call made as a task
			// (MCP 2025-11-25, Basic › Utilities › Tasks).
			if kindOf(member(task, "taskId")) != '"' || kindOf(member(task, "status")) != '"' {
				return "is a task (a CreateTaskResult) without a taskId and a status string"
			}
			return ""
		}
		sc := kindOf(member(res, "structuredContent"))
		if kindOf(member(res, "content")) != '[' && (sc == 0 || sc == 'n') {
			return "has no content array (nor structuredContent)"
		}
	}
	return ""
}

func (p *protocolChecks) findings(j *Judger) []reports.Finding {
	var fs []reports.Finding
	for _, k := range p.order {
		v := p.byKey[k]
		msg := fmt.Sprintf("%s (%d %s from the %s)", v.msg, v.count, words.Plural(v.count, "frame", "frames"), j.p.name)
		f := reports.NewFinding(v.rule, msg, v.evidence)
		f.Request = v.req
		fs = append(fs, f)
	}
	if p.extra > 0 {
		j.notes.add(fmt.Sprintf("%d more frames broke the protocol in other ways, not reported (see the transcript)", p.extra))
	}
	return fs
}
