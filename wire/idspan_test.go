package wire

import "testing"

func TestReplaceID(t *testing.T) {
	tests := []struct {
		name, raw, id, want string
		ok                  bool
	}{
		{"number to string", `{"jsonrpc":"2.0","id":1,"method":"x"}` + "\n", `"1"`, `{"jsonrpc":"2.0","id":"1","method":"x"}` + "\n", true},
		{"string to number, spaces and CRLF kept", " { \"id\" : \"abc\" , \"result\":{\"id\":7}}\r\n", `12`, " { \"id\" : 12 , \"result\":{\"id\":7}}\r\n", true},
		{"nested ids untouched", `{"params":{"id":5},"id":5,"method":"m"}`, `"5"`, `{"params":{"id":5},"id":"5","method":"m"}`, true},
		{"the last id, as Classify reads it", `{"id":1,"id":2}`, `3`, `{"id":1,"id":3}`, true},
		{"escaped key", `{"\u0069d":4}`, `"4"`, `{"\u0069d":"4"}`, true},
		{"no id", `{"jsonrpc":"2.0","method":"n"}`, `1`, "", false},
		{"not json", `{"id":1`, `1`, "", false},
		{"array", `[{"id":1}]`, `1`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ReplaceID([]byte(tt.raw), tt.id)
			if ok != tt.ok || string(got) != tt.want {
				t.Errorf("ReplaceID(%q, %s) = %q, %v; want %q, %v", tt.raw, tt.id, got, ok, tt.want, tt.ok)
			}
			if ok {
				if m := Classify(got); m.ID != tt.id {
					t.Errorf("the result classifies with id %s, want %s", m.ID, tt.id)
				}
			}
		})
	}
}

func TestReplaceMember(t *testing.T) {
	const cancel = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}`
	tests := []struct {
		name, raw string
		path      []string
		want      string
		ok        bool
	}{
		{"nested", cancel, []string{"params", "requestId"}, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"V","reason":"x"}}`, true},
		{"top level", cancel, []string{"method"}, `{"jsonrpc":"2.0","method":"V","params":{"requestId":1,"reason":"x"}}`, true},
		{"through a non-object", `{"params":[{"requestId":1}]}`, []string{"params", "requestId"}, "", false},
		{"missing", cancel, []string{"params", "id"}, "", false},
		{"trailing bytes", cancel + "x", []string{"params", "requestId"}, "", false},
		{"no path", cancel, nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ReplaceMember([]byte(tt.raw), `"V"`, tt.path...)
			if ok != tt.ok || string(got) != tt.want {
				t.Errorf("ReplaceMember(%q, %v) = %q, %v; want %q, %v", tt.raw, tt.path, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzReplaceID: whatever the frame, a replaced id is the one Classify
// reads, and nothing but the id's bytes changed.
func FuzzReplaceID(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"x"}`, ` {"id":"a\"b","id":2}` + "\r\n", `{"params":{"id":3}}`, `[1]`, `{"id":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		start, end, ok := IDSpan(raw)
		out, replaced := ReplaceID(raw, `"7"`)
		if ok != replaced {
			t.Fatalf("IDSpan ok %v, ReplaceID ok %v", ok, replaced)
		}
		if !ok {
			return
		}
		if got := Classify(raw).ID; got != string(raw[start:end]) {
			t.Fatalf("IDSpan found %q, Classify reads %q", raw[start:end], got)
		}
		if got := Classify(out).ID; got != `"7"` {
			t.Fatalf("after the replacement Classify reads id %q", got)
		}
		if string(out[:start]) != string(raw[:start]) || string(out[start+3:]) != string(raw[end:]) {
			t.Fatalf("bytes other than the id changed: %q -> %q", raw, out)
		}
	})
}
