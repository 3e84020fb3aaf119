package words

import "testing"

func TestWords(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Cut("héllo", 2), "h…[5 more bytes]"},
		{Cut("abc", 3), "abc"},
		{Duration(250_400), "250ms"},
		{Duration(3_140_000), "3.1s"},
		{Plural(1, "finding", "findings"), "finding"},
		{Plural(0, "finding", "findings"), "findings"},
		{Terminal("plain, with a\ttab and é"), "plain, with a\ttab and é"},
		{Terminal("line one\nline two\r\nline three\rfour"), "line one line two line three four"},
		{Terminal("\x1b[2J\x1b]52;c;aGk=\x07red"), `\x1b[2J\x1b]52;c;aGk=\x07red`},
		{Terminal("del\x7f c1\u0085 nul\x00"), `del\x7f c1\x85 nul\x00`},
		{Terminal("bad \xff utf-8 \xe2\x82"), `bad \xff utf-8 \xe2\x82`},
		{Terminal("abc\u202edef\u2066"), `abc\u202edef\u2066`},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
