// Package shell writes command lines as a POSIX shell reads them, for the
// repro lines and targets people copy out of reports.
package shell

import "strings"

// Quote joins argv into one command line: words made only of letters,
// digits and -_./=:,+@% as they are, the rest single-quoted.
func Quote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}
