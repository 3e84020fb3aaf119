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
func glob(pattern, name string) bool {
	for {
		star := strings.IndexByte(pattern, '*')
		if star < 0 {
			return pattern == name
		}
		if !strings.HasPrefix(name, pattern[:star]) {
			return false
		}
		name = name[star:]
		pattern = pattern[star+1:]
		if pattern == "" {
			return true
		}
		for i := 0; i <= len(name); i++ {
			if glob(pattern, name[i:]) {
				return true
			}
		}
		return false
	}
}
