package judge

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// SessionIDs holds the Mcp-Session-Id values a server issues to the form
// the specification gives them: visible ASCII only (a MUST), globally
// unique and cryptographically secure (a SHOULD): an id a client of
// another user could guess (short, of few random bits, or the next number
// after another session's) lets it take over that session. It judges the
// rebinding scenario's record (one with a foreign page's handshakes): the
// ids its requests carry and those the foreign handshakes were issued,
// several sessions of one server.
var SessionIDs = &Checker{
	Name:  "session-ids",
	Doc:   "an Mcp-Session-Id outside visible ASCII, or one a client could guess",
	Reads: []string{wire.EventHTTP, wire.EventForeign},
	Rules: []string{reports.RuleSessionIDNotASCII, reports.RuleSessionIDGuessable},
	New:   func() Check { return &sessionIDs{seen: map[string]bool{}} },
}

// maxSessionIDs bounds the ids kept of one session's record.
const maxSessionIDs = 64

// guessableBits is the estimated randomness under which an id is
// guessable: a UUID v4 has 122 bits, 64 is what a client could not try in
// a lifetime of requests.
const guessableBits = 64

type sessionIDs struct {
	seen     map[string]bool
	ids      []string
	evidence []reports.Evidence
	found    []reports.Finding
	ascii    bool // reported
	foreign  bool // the record is the rebinding scenario's
}

func (c *sessionIDs) Event(e *wire.Event) {
	if e.Type == wire.EventForeign {
		c.foreign = true
	}
	id := e.MCPSession
	if id == "" || c.seen[id] || len(c.seen) >= maxSessionIDs {
		return
	}
	c.seen[id] = true
	if !c.ascii && !visibleASCII(id) {
		c.ascii = true
		c.found = append(c.found, reports.NewFinding(reports.RuleSessionIDNotASCII,
			fmt.Sprintf("the server issued session id %q, which holds characters outside visible ASCII (0x21 to 0x7E)", id), []reports.Evidence{evidenceOf(e)}))
	}
	c.ids = append(c.ids, id)
	c.evidence = append(c.evidence, evidenceOf(e))
}

func (c *sessionIDs) Findings() []reports.Finding {
	if !c.foreign {
		return nil
	}
	if f := GuessableSessionIDs(c.ids, c.evidence); f != nil {
		return append(c.found, *f)
	}
	return c.found
}

// GuessableSessionIDs is the session-id-guessable finding of the session
// ids one server issued (evidence[i] is where ids[i] was seen), or nil:
// one of few random bits, or two numbered one after the other. The check
// across the sessions of a run of several (crosssession) uses it too.
func GuessableSessionIDs(ids []string, evidence []reports.Evidence) *reports.Finding {
	for i, id := range ids {
		if bits := idBits(id); bits < guessableBits {
			f := reports.NewFinding(reports.RuleSessionIDGuessable,
				fmt.Sprintf("the server issued session id %q: about %d random bits, which a client can guess; session ids should be globally unique and cryptographically secure (a securely generated UUID, a JWT, a cryptographic hash)", id, bits),
				[]reports.Evidence{evidence[i]})
			return &f
		}
	}
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if sequential(ids[i], ids[j]) {
				f := reports.NewFinding(reports.RuleSessionIDGuessable,
					fmt.Sprintf("the server issued session ids %q and %q, which differ only by a small count: a client that has one can guess another user's", ids[i], ids[j]),
					[]reports.Evidence{evidence[i], evidence[j]})
				return &f
			}
		}
	}
	return nil
}

func visibleASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// randomPart is id without its leading label: groups of letters alone,
// each ended by a separator ("mcp-session-", "session_").
func randomPart(id string) string {
	for {
		i := strings.IndexAny(id, "-_:.")
		if i <= 0 || strings.IndexFunc(id[:i], func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }) >= 0 {
			return id
		}
		id = id[i+1:]
	}
}

// idBits estimates the random bits of an id: the length of its random part
// times the bits a character of the alphabets it draws from carries (hex
// digits 4, decimal 3.3, letters and digits about 6).
func idBits(id string) int {
	part := randomPart(id)
	var digits, hexLetters, lower, upper bool
	others := map[rune]bool{}
	for _, r := range part {
		switch {
		case '0' <= r && r <= '9':
			digits = true
		case 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F':
			hexLetters = true
		case 'a' <= r && r <= 'z':
			lower = true
		case 'A' <= r && r <= 'Z':
			upper = true
		default:
			others[r] = true
		}
	}
	alphabet := len(others)
	switch {
	case lower || upper:
		alphabet += 10
		if lower {
			alphabet += 26
		}
		if upper {
			alphabet += 26
		}
	case hexLetters:
		alphabet += 16
	case digits:
		alphabet += 10
	}
	if alphabet < 2 {
		return 0
	}
	return int(float64(len(part)) * math.Log2(float64(alphabet)))
}

// sequential reports whether a and b are the same but for a number at
// their end, a small count apart.
func sequential(a, b string) bool {
	ta, na := trailingNumber(a)
	tb, nb := trailingNumber(b)
	if na == nil || nb == nil || ta != tb {
		return false
	}
	d := new(big.Int).Sub(na, nb)
	return d.CmpAbs(big.NewInt(1000)) <= 0
}

func trailingNumber(s string) (string, *big.Int) {
	i := len(s)
	for i > 0 && '0' <= s[i-1] && s[i-1] <= '9' {
		i--
	}
	if i == len(s) {
		return s, nil
	}
	n, _ := new(big.Int).SetString(s[i:], 10)
	return s[:i], n
}
