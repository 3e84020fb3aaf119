package faults

import (
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/wire"
)

// Pattern selects messages: `[DIR:][KIND:][METHOD]`, e.g. `s2c:response`,
// `c2s:request:tools/call`, `notifications/*`. Each part is optional; METHOD is
// a glob where `*` matches any run of characters, slashes included. A response
// or error matches the method of the request it answers.
type Pattern struct {
	Dir    wire.Direction // 0 matches both
	Kind   wire.Kind
	Kinded bool
	Method string // glob; "" matches any
	text   string
}

// ParsePattern parses the pattern syntax above.
func ParsePattern(s string) (Pattern, error) {
	p := Pattern{text: s}
	if s == "" || s == "*" {
		return p, nil
	}
	parts := strings.Split(s, ":")
	for i, part := range parts {
		if d, err := wire.ParseDirection(part); err == nil && !p.Kinded && p.Dir == 0 && p.Method == "" {
			p.Dir = d
			continue
		}
		if k, ok := wire.ParseKind(part); ok && !p.Kinded && p.Method == "" {
			p.Kind, p.Kinded = k, true
			continue
		}
		if i != len(parts)-1 || part == "" {
			return Pattern{}, fmt.Errorf("pattern %q: %q is not a direction (c2s, s2c) or a kind (request, notification, response, error, invalid), and only the last part may be a method", s, part)
		}
		p.Method = strings.Join(parts[i:], ":")
	}
	return p, nil
}

func (p Pattern) String() string { return p.text }

// Matches reports whether a message travelling in dir matches; method is the
// message's method or, for an answer, the method of the request it answers.
func (p Pattern) Matches(dir wire.Direction, m *wire.Message, method string) bool {
	if p.Dir != 0 && p.Dir != dir {
		return false
	}
	if p.Kinded && p.Kind != m.Kind {
		return false
	}
	return p.Method == "" || glob(p.Method, method)
}

// glob matches name against a pattern in which `*` matches any run of
// characters; path.Match would stop `notifications/*` at the next slash.
//
// It backtracks only to the last star seen, which is enough because a star
// matches any run: the time is O(len(pattern)*len(name)) whatever the number
// of stars, where trying every split at every star would be exponential (and
// name comes from a peer).
func glob(pattern, name string) bool {
	if strings.IndexByte(pattern, '*') < 0 {
		// A method named in full, the commonest pattern: one comparison
		// rather than a walk byte by byte, for every frame of a session.
		return pattern == name
	}
	px, nx := 0, 0
	star, starNx := -1, 0 // the last star in pattern and where its run ends in name
	for px < len(pattern) || nx < len(name) {
		if px < len(pattern) {
			switch c := pattern[px]; {
			case c == '*':
				star, starNx = px, nx
				px++
				continue
			case nx < len(name) && name[nx] == c:
				px++
				nx++
				continue
			}
		}
		if star >= 0 && starNx < len(name) {
			// Let the last star swallow one more byte and retry after it.
			starNx++
			px, nx = star+1, starNx
			continue
		}
		return false
	}
	return true
}
