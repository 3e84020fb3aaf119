package rawmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Protocol versions. StatelessVersion is the stateless era (server/discover,
// per-request _meta, no server-to-client requests); the others are reached
// through initialize.
const StatelessVersion = "2026-07-28"

// StatefulVersions are the initialize-era versions, newest first.
var StatefulVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// _meta keys of the stateless era.
const (
	MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	MetaServerInfo      = "io.modelcontextprotocol/serverInfo"
)

// JSON-RPC and MCP error codes.
const (
	CodeParseError         = -32700
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeUnsupportedVersion = -32022
)

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// Era is the protocol era a request belongs to.
type Era int

const (
	Stateful  Era = iota // initialize, ping, server-to-client requests
	Stateless            // 2026-07-28: server/discover, _meta on every request
)

func (e Era) String() string {
	if e == Stateless {
		return "stateless"
	}
	return "stateful"
}

// requestEra reads the era from a request's params: a stateless request
// declares its protocol version in _meta; server/discover is stateless by
// definition.
func requestEra(method string, params json.RawMessage) (Era, string) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	var version string
	if raw, ok := p.Meta[MetaProtocolVersion]; ok {
		_ = json.Unmarshal(raw, &version)
		return Stateless, version
	}
	if method == "server/discover" {
		return Stateless, ""
	}
	return Stateful, ""
}

// capabilities are tools, and what Server.Capabilities adds.
func (s *Server) capabilities() map[string]any {
	c := map[string]any{"tools": map[string]any{}}
	for k, v := range s.Capabilities {
		c[k] = v
	}
	return c
}

func (s *Server) info() map[string]any {
	return map[string]any{"name": s.Name, "version": s.Version}
}

func (s *Server) supportedVersions() []string {
	if s.StatefulOnly {
		return StatefulVersions
	}
	return append([]string{StatelessVersion}, StatefulVersions...)
}

// dispatch answers one request. Results are maps so that the stateless era's
// required fields can be stamped on them.
func (s *Server) dispatch(ctx context.Context, method string, params json.RawMessage) (map[string]any, *Error) {
	era, version := requestEra(method, params)
	if era == Stateless && method == "server/discover" && s.StatefulOnly {
		return nil, &Error{Code: CodeMethodNotFound, Message: "Method not found"}
	}
	if era == Stateless && version != "" && (s.StatefulOnly || version != StatelessVersion) {
		return nil, &Error{
			Code:    CodeUnsupportedVersion,
			Message: fmt.Sprintf("unsupported protocol version %q", version),
			Data:    map[string]any{"supported": s.supportedVersions(), "requested": version},
		}
	}

	if h := s.Methods[method]; h != nil {
		result, err := h(ctx, era, params)
		switch {
		case err != nil:
			return nil, err
		case result != nil:
			return s.stamp(era, method, result), nil
		}
		// nil, nil: the built-in handling below.
	}
	var result map[string]any
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(params, &p)
		negotiated := StatefulVersions[0]
		if slices.Contains(StatefulVersions, p.ProtocolVersion) {
			negotiated = p.ProtocolVersion
		}
		result = map[string]any{
			"protocolVersion": negotiated,
			"capabilities":    s.capabilities(),
			"serverInfo":      s.info(),
		}
	case "server/discover":
		result = map[string]any{
			"supportedVersions": s.supportedVersions(),
			"capabilities":      s.capabilities(),
		}
	case "ping":
		result = map[string]any{}
	case "tools/list":
		tools := make([]map[string]any, 0, len(s.Tools))
		for _, t := range s.Tools {
			tools = append(tools, t.listing())
		}
		result = map[string]any{"tools": tools}
	case "tools/call":
		var err *Error
		if result, err = s.callTool(ctx, era, params); err != nil {
			return nil, err
		}
	default:
		return nil, &Error{Code: CodeMethodNotFound, Message: "Method not found"}
	}

	return s.stamp(era, method, result), nil
}

// stamp adds to a stateless-era result what that era requires of it.
func (s *Server) stamp(era Era, method string, result map[string]any) map[string]any {
	if era == Stateless {
		// What 2026-07-28 requires of every result (as mcp-go stamps it):
		// resultType, the server's identity in _meta, and cache hints on
		// the results the schema makes cacheable (CacheableResult).
		result["resultType"] = "complete"
		result["_meta"] = map[string]any{MetaServerInfo: s.info()}
		switch method {
		case "server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read":
			result["ttlMs"] = 0
			result["cacheScope"] = "private"
		}
	}
	return result
}
