package judge

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/internal/mcpschema"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// ToolSchemas holds a server to the schemas of its own tools, as its
// tools/list gave them: a tool call whose arguments break the tool's
// inputSchema must be refused (a JSON-RPC error or a tool error result),
// and a tool's successful result must carry structuredContent that
// conforms to its outputSchema, when it declares one.
var ToolSchemas = &Checker{
	Name:  "tool-schemas",
	Doc:   "tool calls against the inputSchema and outputSchema the server listed for the tool",
	Reads: []string{wire.EventReceived},
	Rules: []string{reports.RuleInputNotValidated, reports.RuleOutputSchema},
	New:   func() Check { return &toolSchemas{asked: map[string]asked{}, tools: map[string]*listedTool{}} },
}

// maxToolSchemaBytes bounds the schemas compiled: a listing is the
// server's to make, and a schema of megabytes is not worth the time.
const maxToolSchemaBytes = 256 << 10

type asked struct {
	id, method, tool string
	args             json.RawMessage
	ev               reports.Evidence
}

type listedTool struct {
	input, output json.RawMessage
	// compiled lazily, once each; failed says why a schema could not be.
	in, out         *mcpschema.ToolSchema
	inDone, outDone bool
}

type schemaBreach struct {
	// tool is the tool, or the method, the breach is of; id the first
	// request's.
	tool, id string
	// revision is the MCP schema's it was judged by (official-schema).
	revision string
	problems []mcpschema.Problem
	count    int
	evidence []reports.Evidence
}

type toolSchemas struct {
	// asked are the client's requests of interest, by id, until answered.
	asked map[string]asked
	tools map[string]*listedTool
	// breaches by rule and tool, in the order first seen.
	breaches map[string]*schemaBreach
	order    []string
}

func (c *toolSchemas) Event(e *wire.Event) {
	switch {
	case e.Dir == "c2s" && e.Kind == "request" && (e.Method == "tools/list" || e.Method == "tools/call"):
		a := asked{id: e.ID, method: e.Method, ev: evidenceOf(e)}
		if e.Method == "tools/call" {
			var req struct {
				Params struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(e.Raw), &req) != nil || req.Params.Name == "" {
				return
			}
			a.tool, a.args = req.Params.Name, req.Params.Arguments
			if len(a.args) == 0 || string(a.args) == "null" {
				a.args = json.RawMessage("{}")
			}
		}
		if len(c.asked) < maxOpenAsked {
			c.asked[e.ID] = a
		}
	case e.Dir == "s2c" && (e.Kind == "response" || e.Kind == "error"):
		a, ok := c.asked[e.ID]
		if !ok {
			return
		}
		delete(c.asked, e.ID)
		if e.Kind != "response" {
			return
		}
		switch a.method {
		case "tools/list":
			c.listed(e)
		case "tools/call":
			c.called(a, e)
		}
	}
}

// maxOpenAsked bounds what is remembered of requests never answered.
const maxOpenAsked = 4096

func (c *toolSchemas) listed(e *wire.Event) {
	var res struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(e.Raw), &res) != nil {
		return
	}
	for _, t := range res.Result.Tools {
		if t.Name != "" && len(c.tools) < 4096 {
			c.tools[t.Name] = &listedTool{input: t.InputSchema, output: t.OutputSchema}
		}
	}
}

func (c *toolSchemas) called(a asked, e *wire.Event) {
	t := c.tools[a.tool]
	if t == nil {
		return
	}
	var res struct {
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			// A task's creation, or a stateless era's request for input,
			// is not the tool's result.
			Task       json.RawMessage `json:"task"`
			ResultType string          `json:"resultType"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(e.Raw), &res) != nil || res.Result.IsError || res.Result.Task != nil ||
		res.Result.ResultType != "" && res.Result.ResultType != "complete" {
		return
	}
	if in := t.inputSchema(); in != nil {
		if ps := in.Validate(a.args); len(ps) > 0 {
			for i := range ps {
				ps[i].Pointer = "/arguments" + ps[i].Pointer
			}
			c.breach(reports.RuleInputNotValidated, a, ps, a.ev, evidenceOf(e))
		}
	}
	if out := t.outputSchema(); out != nil {
		if !declaredJSON(res.Result.StructuredContent) {
			c.breach(reports.RuleOutputSchema, a, []mcpschema.Problem{{Pointer: "/result", Keyword: "required",
				Message: "no structuredContent, though the tool declares an outputSchema"}}, a.ev, evidenceOf(e))
		} else if ps := out.Validate(res.Result.StructuredContent); len(ps) > 0 {
			for i := range ps {
				ps[i].Pointer = "/result/structuredContent" + ps[i].Pointer
			}
			c.breach(reports.RuleOutputSchema, a, ps, a.ev, evidenceOf(e))
		}
	}
}

func declaredJSON(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func (t *listedTool) inputSchema() *mcpschema.ToolSchema {
	if !t.inDone {
		t.inDone = true
		t.in = compileToolSchema(t.input)
	}
	return t.in
}

func (t *listedTool) outputSchema() *mcpschema.ToolSchema {
	if !t.outDone {
		t.outDone = true
		t.out = compileToolSchema(t.output)
	}
	return t.out
}

// compileToolSchema compiles a listed schema; one that cannot be compiled
// (a remote $ref, a pattern Go cannot read) judges nothing: the schema is
// the server's, and a check the judge cannot make is not a finding.
func compileToolSchema(raw json.RawMessage) *mcpschema.ToolSchema {
	if !declaredJSON(raw) || len(raw) > maxToolSchemaBytes {
		return nil
	}
	s, err := mcpschema.CompileToolSchema(raw)
	if err != nil {
		return nil
	}
	return s
}

func (c *toolSchemas) breach(rule string, a asked, ps []mcpschema.Problem, ev ...reports.Evidence) {
	key := rule + "\x00" + a.tool
	if c.breaches == nil {
		c.breaches = map[string]*schemaBreach{}
	}
	b := c.breaches[key]
	if b == nil {
		if len(c.breaches) >= maxViolationKinds {
			return
		}
		b = &schemaBreach{tool: a.tool, id: a.id, problems: ps}
		c.breaches[key] = b
		c.order = append(c.order, key)
	}
	b.count++
	if len(b.evidence) < 2*maxViolationEvidence {
		b.evidence = append(b.evidence, ev...)
	}
}

func (c *toolSchemas) Findings() []reports.Finding {
	var out []reports.Finding
	for _, key := range c.order {
		b := c.breaches[key]
		rule, _, _ := strings.Cut(key, "\x00")
		var what []string
		for _, p := range b.problems {
			what = append(what, p.String())
		}
		calls := fmt.Sprintf("%d %s", b.count, words.Plural(b.count, "call", "calls"))
		var msg string
		switch rule {
		case reports.RuleInputNotValidated:
			msg = fmt.Sprintf("tool %s answered %s whose arguments break its inputSchema with a successful result, where it must refuse them (a JSON-RPC error, or a result with isError): %s",
				b.tool, calls, strings.Join(what, "; "))
		default:
			msg = fmt.Sprintf("tool %s answered %s with a result that does not conform to its outputSchema: %s", b.tool, calls, strings.Join(what, "; "))
		}
		f := reports.NewFinding(rule, msg, b.evidence)
		f.Request = &reports.Request{ID: b.id, Method: "tools/call", Tool: b.tool}
		out = append(out, f)
	}
	return out
}
