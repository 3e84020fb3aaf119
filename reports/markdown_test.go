package reports

import "testing"

// TestTargetWords: a client under test is named as the client it is, run
// against a server, never as the command that served the URL.
func TestTargetWords(t *testing.T) {
	for _, tc := range []struct {
		target Target
		want   string
	}{
		{Target{Command: []string{"python", "server.py"}}, "python server.py"},
		{Target{Command: []string{"npx", "srv"}, URL: "http://127.0.0.1:3000/mcp"}, "http://127.0.0.1:3000/mcp, served by npx srv"},
		{Target{URL: "http://127.0.0.1:3000/mcp"}, "http://127.0.0.1:3000/mcp"},
		{Target{Command: []string{"node", "client.mjs"}, Role: RoleClient, URL: "http://127.0.0.1:3000/mcp", Server: []string{"python", "s.py", "http"}},
			"client node client.mjs against http://127.0.0.1:3000/mcp, served by python s.py http"},
		{Target{Command: []string{"node", "client.mjs"}, Role: RoleClient, URL: "http://127.0.0.1:3000/mcp"}, "client node client.mjs against http://127.0.0.1:3000/mcp"},
		{Target{Command: []string{"node", "client.mjs"}, Role: RoleClient, Server: []string{"mcpchaos", "serve"}}, "client node client.mjs against server mcpchaos serve"},
	} {
		if got := targetWords(tc.target); got != tc.want {
			t.Errorf("targetWords(%+v) = %q, want %q", tc.target, got, tc.want)
		}
	}
}
