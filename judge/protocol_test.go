package judge

import "testing"

// The stateless revision answers a tools/call that needs the client's
// input with resultType input_required and no content (the Python SDK's
// everything-server does for its elicitation and roots tools).
func TestCheckResultInputRequired(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}}`, "is input_required with no inputRequests object"},
		{`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`, "has no content array (nor structuredContent)"},
	} {
		if got := checkResult("tools/call", []byte(tc.raw)); got != tc.want {
			t.Errorf("checkResult(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}
