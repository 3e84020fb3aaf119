package probe

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The hostile workloads (Config.Hostile): requests no polite client sends,
// each of which a server must still answer (JSON-RPC 2.0 §4), with an error
// or, for a tool's arguments, a tool error result (MCP 2025-11-25, Server ›
// Tools › Error Handling), and go on serving. A crash, a hang or a server
// that stops answering after one is a finding of the judge's usual rules;
// a tool call whose arguments break the tool's inputSchema and come back a
// success is the judge's input-not-validated warning.
const (
	// HostileSample is the bounded sample the baseline sends, requests
	// whose envelope is well formed: ids of the legal forms a polite
	// client seldom uses, an unknown params field, a string argument grown
	// to 16 KiB, a relative URI, a prompt without its required arguments.
	HostileSample = "sample"
	// HostileWide is the hostile-input scenario's: the sample, 1 MiB strings,
	// control characters and lone surrogates, huge, negative and
	// fractional numbers, each required argument of a tool missing, null
	// and retyped, URIs of unknown schemes and of great length, template
	// expansions with many list items, completions without their context;
	// and last, params missing, null and an array for every method the
	// server declares, and a tool name of the wrong type.
	HostileWide = "wide"
)

// HostileWorkloads are the values Config.Hostile takes besides "".
var HostileWorkloads = []string{HostileSample, HostileWide}

const (
	// sampleLong stays under the 64 KiB of a line read with bufio.Scanner's
	// default buffer: that bug is oversize-call's to find, not the
	// baseline's.
	sampleLong = 16 << 10
	wideLong   = 1 << 20
	// maxHostile bounds the wide workload, so that a server with many tools
	// and methods gets a run of bounded time.
	maxHostile = 64
)

// hostileRequest is one request of a hostile workload.
type hostileRequest struct {
	method string
	// id is the request's id as JSON text; "" takes the session's next.
	id string
	// params is the params member as JSON text; nil leaves it out.
	params json.RawMessage
	// what says what is hostile about it, for the coverage note and the
	// request's record (Request.Hostile).
	what string
	// tool is the tool a tools/call names.
	tool string
	// growth marks a step of a growth series (growth.go).
	growth bool
}

// hostileWork plans the hostile workload of a session: what the server
// declared and listed decides what there is to send.
func (s *session) hostileWork(caps serverCapabilities, tools []listedTool, sf *surface) []hostileRequest {
	level := s.cfg.Hostile
	if level == "" {
		return nil
	}
	wide := level == HostileWide
	// tail are the requests sent last (see below).
	var out, tail []hostileRequest
	add := func(r hostileRequest) { out = append(out, r) }
	// params is a request's params: fields, with the stateless era's _meta
	// where it needs one.
	params := func(fields map[string]any) json.RawMessage {
		b, err := json.Marshal(s.params(fields, nil, s.stateless()))
		if err != nil || string(b) == "null" {
			// Never a request without params by mistake: only the
			// malformed ones the workload means leave them out.
			return json.RawMessage("{}")
		}
		return b
	}

	// Ids of every legal form but those whose text a fair encoder may
	// change (non-ASCII and escapes, integers past 2^53: see docs).
	idMethod, idParams := "ping", json.RawMessage(nil)
	if s.stateless() {
		idMethod, idParams = "server/discover", params(nil)
	}
	ids := []struct{ id, what string }{
		{"0", "the id 0"},
		{"-1", "a negative id"},
		{strconv.Quote("mcpchaos " + strings.Repeat("id-", 64)), "a long string id with a space"},
	}
	if wide {
		ids = append(ids,
			struct{ id, what string }{"9007199254740991", "the id 2^53-1, the largest integer every JSON parser keeps"},
			struct{ id, what string }{`""`, "the empty string as id"})
	}
	for _, id := range ids {
		add(hostileRequest{method: idMethod, id: id.id, params: idParams, what: id.what})
	}

	callable := slices.DeleteFunc(slices.Clone(tools), func(t listedTool) bool {
		_, explicit := s.explicitCall(t.Name)
		return t.taskOnly() || slices.Contains(s.cfg.SkipTools, t.Name) || s.cfg.Calls != nil && !explicit
	})
	call := func(t listedTool, args map[string]any, what string) {
		add(hostileRequest{method: "tools/call", tool: t.Name, what: what,
			params: params(map[string]any{"name": t.Name, "arguments": args})})
	}
	if len(callable) > 0 {
		t := callable[0]
		add(hostileRequest{method: "tools/call", tool: t.Name, what: "tools/call with a params field no revision defines",
			params: params(map[string]any{"name": t.Name, "arguments": objectOf(s.callArgs(t)), "mcpchaos/unknown-field": true})})
	}
	long := sampleLong
	if wide {
		long = wideLong
	}
	for _, t := range callable {
		name, ok := stringProperty(t.InputSchema)
		if !ok {
			continue
		}
		args := objectOf(s.callArgs(t))
		args[name] = strings.Repeat("m", long)
		call(t, args, "a string argument of "+sizeWords(long))
		if wide {
			args[name] = "\x00\x07\x1b[31m\u2028"
			call(t, args, "a string argument of control characters")
			args := objectOf(s.callArgs(t))
			// A lone surrogate, as JSON may escape it and no UTF-8 can
			// carry it: the params are written by hand. It goes with the
			// malformed requests, last.
			call(t, args, "")
			tail = append(tail, loneSurrogate(out[len(out)-1], name))
			out = out[:len(out)-1]
		}
		break
	}
	if wide {
		for i, t := range callable {
			if i == 4 {
				break
			}
			for _, m := range schemaBreakers(t.InputSchema, s.callArgs(t)) {
				call(t, m.args, m.what)
			}
		}
	}

	if declared(caps.Resources) {
		add(hostileRequest{method: "resources/read", params: params(map[string]any{"uri": "../mcpchaos/../../no-such-resource"}), what: "resources/read of a relative URI with ../"})
		if wide {
			add(hostileRequest{method: "resources/read", params: params(map[string]any{"uri": "mcpchaos-no-such-scheme://x"}), what: "resources/read of a URI of an unknown scheme"})
			add(hostileRequest{method: "resources/read", params: params(map[string]any{"uri": "file:///" + strings.Repeat("a/", 32<<10)}), what: "resources/read of a 64 KiB URI"})
			for _, tpl := range sf.templates {
				for _, u := range expansions(tpl) {
					add(hostileRequest{method: "resources/read", params: params(map[string]any{"uri": u.uri}), what: u.what})
				}
				break
			}
		}
	}
	for _, p := range sf.prompts {
		if slices.ContainsFunc(p.Arguments, func(a struct {
			Name     string `json:"name"`
			Required bool   `json:"required"`
		}) bool {
			return a.Required
		}) {
			add(hostileRequest{method: "prompts/get", params: params(map[string]any{"name": p.Name}), what: "prompts/get without the prompt's required arguments"})
			break
		}
	}
	if wide && declared(caps.Completions) && len(sf.prompts) > 0 {
		add(hostileRequest{method: "completion/complete", params: params(map[string]any{
			"ref": map[string]any{"type": "ref/prompt", "name": sf.prompts[0].Name}, "argument": map[string]any{"name": "mcpchaos", "value": ""}}),
			what: "completion/complete of an argument the prompt does not have, without context"})
	}
	if wide {
		// Last: a server that drops a request it cannot parse (as many
		// SDKs do, and must not) costs a deadline, and after a request
		// left unanswered the workload sends nothing more.
		tail = append(tail, s.everyMethodMalformed(caps, params)...)
		out = append(out[:min(len(out), max(0, maxHostile-len(tail)))], tail...)
	}
	return out
}

// everyMethodMalformed is each method the server declares with params
// missing, null and an array.
func (s *session) everyMethodMalformed(caps serverCapabilities, params func(map[string]any) json.RawMessage) []hostileRequest {
	var methods []string
	if declared(caps.Resources) {
		methods = append(methods, "resources/read", "resources/templates/list")
		if caps.subscribe() && !s.stateless() {
			methods = append(methods, "resources/subscribe")
		}
	}
	if declared(caps.Prompts) {
		methods = append(methods, "prompts/get")
	}
	if declared(caps.Completions) {
		methods = append(methods, "completion/complete")
	}
	if declared(caps.Logging) && !s.stateless() {
		methods = append(methods, "logging/setLevel")
	}
	var out []hostileRequest
	if declared(caps.Tools) {
		out = append(out, hostileRequest{method: "tools/list", params: params(map[string]any{"cursor": 7}), what: "tools/list with a number for the cursor"},
			hostileRequest{method: "tools/call", params: params(map[string]any{"name": 42, "arguments": map[string]any{}}), what: "tools/call with a number for the tool's name"},
			hostileRequest{method: "tools/call", what: "tools/call without params"},
			hostileRequest{method: "tools/call", params: json.RawMessage("null"), what: "tools/call with params null"},
			hostileRequest{method: "tools/call", params: json.RawMessage("[]"), what: "tools/call with params an array"})
	}
	for _, m := range methods {
		out = append(out,
			hostileRequest{method: m, what: m + " without params"},
			hostileRequest{method: m, params: json.RawMessage("null"), what: m + " with params null"},
			hostileRequest{method: m, params: json.RawMessage("[]"), what: m + " with params an array"})
	}
	return out
}

// callArgs are the arguments the workload calls t with.
func (s *session) callArgs(t listedTool) json.RawMessage {
	if c, ok := s.explicitCall(t.Name); ok && c.Args != nil {
		return c.Args
	}
	return s.arguments(t.InputSchema)
}

func objectOf(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(raw, &m)
	return m
}

// toolSchema is what the probe reads of a tool's inputSchema: which
// properties it requires, and each one's type.
type toolSchema struct {
	Required   []string `json:"required"`
	Properties map[string]struct {
		Type any `json:"type"`
	} `json:"properties"`
}

// stringProperty is a property of the schema whose type is string, required
// ones first, in name order.
func stringProperty(schema json.RawMessage) (string, bool) {
	var sc toolSchema
	if json.Unmarshal(schema, &sc) != nil {
		return "", false
	}
	names := slices.Sorted(maps.Keys(sc.Properties))
	slices.SortStableFunc(names, func(a, b string) int {
		return boolRank(!slices.Contains(sc.Required, a)) - boolRank(!slices.Contains(sc.Required, b))
	})
	for _, n := range names {
		if sc.Properties[n].Type == "string" {
			return n, true
		}
	}
	return "", false
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

type breaker struct {
	args map[string]any
	what string
}

// schemaBreakers are arguments that break the schema, each one way: a
// required property missing, null, of the wrong type; a number huge,
// negative or fractional where an integer is wanted; and no arguments at
// all where some are required.
func schemaBreakers(schema, valid json.RawMessage) []breaker {
	var sc toolSchema
	if json.Unmarshal(schema, &sc) != nil {
		return nil
	}
	var out []breaker
	with := func(name string, v any, what string) {
		args := objectOf(valid)
		args[name] = v
		out = append(out, breaker{args, what})
	}
	for _, name := range slices.Sorted(slices.Values(sc.Required)) {
		args := objectOf(valid)
		delete(args, name)
		out = append(out, breaker{args, "a tool call without its required argument " + strconv.Quote(name)})
		with(name, nil, "a tool call with null for its required argument "+strconv.Quote(name))
		switch sc.Properties[name].Type {
		case "string":
			with(name, map[string]any{"mcpchaos": true}, "a tool call with an object for its string argument "+strconv.Quote(name))
		case "integer", "number":
			with(name, []any{"mcpchaos"}, "a tool call with an array for its numeric argument "+strconv.Quote(name))
		case "boolean":
			with(name, map[string]any{}, "a tool call with an object for its boolean argument "+strconv.Quote(name))
		case "array":
			with(name, map[string]any{}, "a tool call with an object for its array argument "+strconv.Quote(name))
		case "object":
			with(name, []any{}, "a tool call with an array for its object argument "+strconv.Quote(name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sc.Properties)) {
		if sc.Properties[name].Type == "integer" {
			with(name, json.Number("1e308"), "a tool call with 1e308 for its integer argument "+strconv.Quote(name))
			with(name, json.Number("-1"), "a tool call with -1 for its integer argument "+strconv.Quote(name))
			with(name, json.Number("0.5"), "a tool call with 0.5 for its integer argument "+strconv.Quote(name))
			break
		}
	}
	return out
}

// loneSurrogate rewrites the tools/call r so that its string argument name
// is a lone surrogate, as a JSON escape.
func loneSurrogate(r hostileRequest, name string) hostileRequest {
	const marker = "mcpchaos-lone-surrogate"
	var params map[string]any
	if json.Unmarshal(r.params, &params) != nil {
		return r
	}
	args, _ := params["arguments"].(map[string]any)
	if args == nil {
		return r
	}
	args[name] = marker
	b, _ := json.Marshal(params)
	r.params = json.RawMessage(strings.Replace(string(b), strconv.Quote(marker), `"\ud800mcpchaos"`, 1))
	r.what = "a string argument holding a lone surrogate (\\ud800)"
	return r
}

type expansion struct{ uri, what string }

// expansions of a URI template (RFC 6570) that a matcher must answer fast:
// each variable filled with a long list of items, and a near miss (the
// expansion with a character of its literal part changed).
func expansions(tpl string) []expansion {
	if !strings.Contains(tpl, "{") {
		return nil
	}
	items := strings.TrimSuffix(strings.Repeat("a,", 1000), ",")
	var b strings.Builder
	for rest := tpl; ; {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		b.WriteString(items)
		rest = rest[j+1:]
	}
	full := b.String()
	out := []expansion{{full, "resources/read of the template " + tpl + " with a list of 1000 items in each variable"}}
	if i := strings.LastIndexAny(full, "/:."); i >= 0 {
		near := full[:i] + "~" + full[i+1:]
		out = append(out, expansion{near, "resources/read of a near miss of the template " + tpl})
	}
	return out
}

func sizeWords(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n>>10) + " KiB"
}

// hostile sends the hostile workload, one request at a time: each is waited
// for (within its deadline), and once one goes unanswered the rest are not
// sent, so a server that dies of one is found once, not again for each
// request after it.
func (s *session) hostile(reqs []hostileRequest) {
	s.oneByOne.Store(true)
	for _, r := range reqs {
		if _, _, sent := s.sendHostile(r); !sent {
			return
		}
	}
}

// sendHostile sends r and waits for it to be settled, which its deadline
// bounds: how long the answer took, whether one came, and false for sent
// when the session ended or a request went unanswered before it. Not
// goOn: a hostile request not sent is no reason a polite one was not (the
// coverage note's).
func (s *session) sendHostile(r hostileRequest) (took time.Duration, answered, sent bool) {
	s.mu.Lock()
	stop := s.unanswered != ""
	s.mu.Unlock()
	if stop || s.ended() {
		return 0, false, false
	}
	p, err := s.requestRaw(r.method, r.id, r.params, r.tool)
	if err != nil {
		return 0, false, false
	}
	s.mu.Lock()
	s.requests[p.idx].Hostile = r.what
	s.requests[p.idx].Growth = r.growth
	s.mu.Unlock()
	<-p.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[p.idx].Took, p.answered, true
}
