package mcpheader

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMirror(t *testing.T) {
	stale := func() http.Header {
		return http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}, "Mcp-Param-Region": {"eu"}, "Authorization": {"Bearer x"}}
	}
	for _, tc := range []struct {
		name, body, version string
		want                http.Header
	}{
		{"a modern ping gets its own method, and no name", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, "2026-07-28",
			http.Header{"Mcp-Method": {"ping"}, "Authorization": {"Bearer x"}}},
		{"a modern call names its tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"añadir"}}`, "2026-07-28",
			http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64?YcOxYWRpcg==?="}, "Authorization": {"Bearer x"}}},
		{"the version in _meta counts", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "",
			http.Header{"Mcp-Method": {"server/discover"}, "Authorization": {"Bearer x"}}},
		{"a stateful session gets none", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "2025-11-25",
			http.Header{"Authorization": {"Bearer x"}}},
		{"a response has no method", `{"jsonrpc":"2.0","id":1,"result":{}}`, "2026-07-28",
			http.Header{"Authorization": {"Bearer x"}}},
		{"garbage has none", `{"jsonrpc":`, "2026-07-28",
			http.Header{"Authorization": {"Bearer x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := stale()
			Mirror(h, []byte(tc.body), tc.version)
			if diff := cmp.Diff(tc.want, h); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}
