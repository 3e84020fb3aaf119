package judge

import "testing"

// The ids the SDKs issue are not guessable; short, labelled-number and
// numbered ones are.
func TestSessionIDBits(t *testing.T) {
	for _, tc := range []struct {
		id        string
		guessable bool
	}{
		{"3f1c9a7e-52b4-4d0e-8a61-9b2f7c4d1e08", false},             // TypeScript: randomUUID()
		{"68f383638db344d2858e3015ea605fe4", false},                 // Python: uuid4().hex
		{"mcp-session-0948a463-d1b4-4389-a09f-f028a706967f", false}, // mcp-go
		{"QJ4XHTXCQ6ZJ2F3V7PLMRWHN5E", false},                       // go-sdk: crypto/rand Text()
		{"1", true},
		{"session-17", true},
		{"mcp-session-42", true},
		{"a1b2c3d4", true},
	} {
		if got := idBits(tc.id) < guessableBits; got != tc.guessable {
			t.Errorf("%q: %d bits, guessable %v, want %v", tc.id, idBits(tc.id), got, tc.guessable)
		}
	}
	if !sequential("sess-100", "sess-101") || sequential("sess-100", "other-101") || sequential("abc", "abd") {
		t.Error("sequential is wrong")
	}
}
