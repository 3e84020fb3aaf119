package probe

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// The requests the probe sends to see them refused: a server must answer
// each (JSON-RPC 2.0 §4: every request gets a response), and one it never
// answers is lost like any other. How it refuses is its own: an unknown
// tool or bad arguments may come back as a JSON-RPC error or as a tool
// result with isError (MCP 2025-11-25, Server › Tools › Error Handling,
// which since 2025-11-25 prefers the latter for arguments).
const (
	DeliberateUnknownTool   = "a tool the server does not list"
	DeliberateBadArguments  = "arguments the tool's schema refuses"
	DeliberateUnknownMethod = "a method no revision defines"
)

// unknownMethod is a method no MCP revision defines: JSON-RPC asks for
// -32601 (Method not found).
const unknownMethod = "mcpchaos/no-such-method"

// errorPaths sends the deliberate errors of tools/call. tools is the
// listing, complete whether it was whole (a tool missing from a partial
// listing may exist).
func (s *session) errorPaths(caps serverCapabilities, tools []listedTool, complete bool) {
	type ask struct {
		method, why string
		fields      map[string]any
		tool        string
	}
	var asks []ask
	if declared(caps.Tools) && complete {
		name := unlistedTool(tools)
		asks = append(asks, ask{"tools/call", DeliberateUnknownTool, map[string]any{"name": name, "arguments": map[string]any{}}, name})
		candidates := tools
		if s.cfg.Calls != nil {
			// The user said which tools to call: no other is called,
			// not even to be refused.
			candidates = slices.DeleteFunc(slices.Clone(tools), func(t listedTool) bool {
				_, asked := s.explicitCall(t.Name)
				return !asked
			})
		}
		if t, args, ok := refusedArguments(candidates, s.cfg.SkipTools); ok {
			asks = append(asks, ask{"tools/call", DeliberateBadArguments, map[string]any{"name": t, "arguments": args}, t})
		}
	}
	// Sent together and waited for together: a server that answers
	// neither costs one deadline, not two.
	var sent []*pending
	for _, a := range asks {
		if !s.goOn(a.method) {
			break
		}
		p, err := s.request(a.method, s.params(a.fields, nil, s.stateless()), a.tool)
		if err != nil {
			break
		}
		s.mu.Lock()
		s.requests[p.idx].Deliberate = a.why
		s.mu.Unlock()
		sent = append(sent, p)
	}
	for _, p := range sent {
		<-p.done
	}
}

// unlistedTool is a tool name the listing does not hold.
func unlistedTool(tools []listedTool) string {
	name := "mcpchaos-no-such-tool"
	for i := 2; slices.ContainsFunc(tools, func(t listedTool) bool { return t.Name == name }); i++ {
		name = "mcpchaos-no-such-tool-" + strconv.Itoa(i)
	}
	return name
}

// refusedArguments finds a tool whose schema refuses some arguments, and
// such arguments: {} where a property is required, else a number where a
// property must be a string (or a string where it must not be). A
// task-only tool is not a candidate: its plain call is refused whatever the
// arguments.
func refusedArguments(tools []listedTool, skip []string) (string, map[string]any, bool) {
	var typed string
	var typedArgs map[string]any
	for _, t := range tools {
		if t.taskOnly() || slices.Contains(skip, t.Name) {
			continue
		}
		var sc toolSchema
		if json.Unmarshal(t.InputSchema, &sc) != nil {
			continue
		}
		if len(sc.Required) > 0 {
			return t.Name, map[string]any{}, true
		}
		if typed != "" {
			continue
		}
		// In name order: the same schema always gives the same call.
		for _, name := range slices.Sorted(maps.Keys(sc.Properties)) {
			switch sc.Properties[name].Type {
			case "string":
				typed, typedArgs = t.Name, map[string]any{name: 1}
			case "number", "integer", "boolean", "object", "array":
				typed, typedArgs = t.Name, map[string]any{name: "mcpchaos"}
			}
			if typed != "" {
				break
			}
		}
	}
	return typed, typedArgs, typed != ""
}

// unknownMethodLast sends the request of a method no revision defines, alone
// and last but the ping: some servers' sessions die of it (FastMCP on mcp
// 1.6.0 fails to validate it and stops reading), and nothing else of the
// workload should be lost with them.
func (s *session) unknownMethodLast() {
	if !s.goOn(unknownMethod) {
		return
	}
	p, err := s.request(unknownMethod, s.params(nil, nil, s.stateless()), "")
	if err != nil {
		return
	}
	s.mu.Lock()
	s.requests[p.idx].Deliberate = DeliberateUnknownMethod
	s.mu.Unlock()
	<-p.done
}
