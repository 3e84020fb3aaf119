// Package words writes the small pieces of text the judge's findings and
// the report's renderings share: excerpts cut to size, durations as people
// say them, plurals.
package words

import (
	"strconv"
	"strings"
	"time"
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
