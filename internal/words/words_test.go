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
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
