// Package mcpheader holds the HTTP header rules of MCP that depend on a
// message's body, for the messages mcpchaos itself sends over HTTP
// (injected requests, liveness probes, the probe client's POSTs): the
// 2026-07-28 revision has servers reject a POST whose Mcp-Method or
// Mcp-Name header disagrees with its body (SEP-2243), so headers copied
// from another message must be mirrored anew.
package mcpheader

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Mirror sets h's Mcp-Method and Mcp-Name headers from the message in
// body, when version (the session's MCP-Protocol-Version, or the
// message's own) requires them; otherwise, and for a message with no
// method (a response) or a batch, it removes them. Mcp-Param-* headers,
// which mirror one tool call's arguments, are always removed.
func Mirror(h http.Header, body []byte, version string) {
	for k := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), mcp.HeaderParamPrefix) {
			delete(h, k)
		}
	}
	h.Del(mcp.HeaderMethod)
	h.Del(mcp.HeaderName)
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method == "" {
		return
	}
	if !mcp.RequiresStandardHeaders(version) && !mcp.RequiresStandardHeaders(MetaVersion(m.Params)) {
		return
	}
	h.Set(mcp.HeaderMethod, m.Method)
	if name, ok := mcp.ExtractHeaderName(mcp.MCPMethod(m.Method), m.Params); ok && name != "" {
		if v, ok := mcp.EncodeHeaderValue(name); ok {
			h.Set(mcp.HeaderName, v)
		}
	}
}

// MetaVersion is the protocol version a stateless request names in its
// params' _meta, or "".
func MetaVersion(params json.RawMessage) string {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Meta.Version
}
