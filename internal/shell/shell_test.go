package shell

import "testing"

func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"python", "server.py", "--port=3000"}, "python server.py --port=3000"},
		{[]string{"sh", "-c", "echo hi; exit 1"}, "sh -c 'echo hi; exit 1'"},
		{[]string{"it's"}, `'it'\''s'`},
		{[]string{""}, "''"},
		{nil, ""},
	} {
		if got := Quote(tc.argv); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.argv, got, tc.want)
		}
	}
}
