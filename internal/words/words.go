// Package words writes the small pieces of text the judge's findings and
// the report's renderings share: excerpts cut to size, durations as people
// say them, plurals.
package words

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Cut returns at most n bytes of s, cut on a rune boundary, and says how
// much was left out. The result is a copy: an excerpt must not pin a frame
// of many megabytes in memory for the life of the judge.
func Cut(s string, n int) string {
	if len(s) <= n {
		return strings.Clone(s)
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…[" + strconv.Itoa(len(s)-i) + " more bytes]"
}

// Duration prints a duration given in microseconds the way a person says
// it: 250ms, 3.1s.
func Duration(us int64) string {
	d := time.Duration(us) * time.Microsecond
	if d >= time.Second || d <= -time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Terminal returns s as it may be printed on one line of a terminal: a
// line break (\n, \r, \r\n) becomes a space, and any other control
// character, a bidirectional-text control, or a byte that is not UTF-8,
// is spelled out (\x1b, \u202e, \xff).
// A peer's text (a tool's error, a stack trace, a frame) reaches the
// summary: printed raw, its line breaks broke the summary's layout, and
// its escape sequences would reach the user's terminal, where they can
// move the cursor, recolour or hide what mcpchaos printed.
func Terminal(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			b.WriteByte(' ')
			size = 2
		case r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r != '\t' && unicode.IsControl(r) || isBidiControl(r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isBidiControl reports the characters that reorder text as it is shown
// (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069): in a peer's text
// they could make the summary read other than it says.
func isBidiControl(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
