package faults

import "fmt"

// forgetSession makes the server forget the client's session, as a server
// restart does, or a load balancer that sends the client's next requests to
// a replica that never saw its initialize. The server keeps the session in
// truth, so the forgetting is simulated at the proxy: from the firing on,
// every request carrying the client's Mcp-Session-Id goes on with an id the
// server never issued. Kept for the rest of the session, not for one
// request: a restarted server forgets for good, so the client's retries
// under its old id meet the same stranger; a new session (an initialize
// without a session id, answered with a new id) passes untouched. The
// server must answer 404, and the client must then start a new session
// (MCP 2025-11-25, Transports › Streamable HTTP › Session Management).
var forgetSessionFamily = &Family{
	Name: "forget-session",
	Doc: "make the server forget the client's session, as a restart or a load balancer sending it to another replica would: " +
		"from the trigger on, every request carrying the client's Mcp-Session-Id goes on with an id the server never issued " +
		"(seeded, shaped like the real one, recorded), so the server must answer 404; a new session (an initialize without a session id) passes untouched. " +
		"By default the triggering message is the first to meet the forgotten session; with position=after, the next one " +
		"(HTTP only; skipped on a request without an Mcp-Session-Id); default on=c2s:request:tools/call",
	Phase:    Before,
	On:       "c2s:request:tools/call",
	New:      func(Values) (Action, error) { return forgetSession{}, nil },
	Example:  "forget-session:on=c2s:request:tools/call",
	HTTPOnly: true,
}

type forgetSession struct{}

func (forgetSession) Fire(c *FireContext) Effect {
	return Effect{ForgetSession: &ForgetSession{Seed: c.Draws.Uint64()},
		Detail: "forget the client's session at the server: its requests go on with an id the server never issued"}
}

// ForgeSessionID returns an id shaped like id that the server never issued,
// drawn from seed: each run of letters and digits that looks random (it
// holds a digit, is hexadecimal, or is long) is shuffled, and words are
// kept. The shape matters: a server that checks an id's form before it
// looks the id up (mcp-go's session managers want "mcp-session-" and a
// UUID) would refuse a foreign-looking id for its form, where a restarted
// server meets a well-formed id it no longer knows. Shuffling keeps each
// run's alphabet (hex, base32, base64url) without guessing it. A UUID
// keeps its version and variant digits in place.
func ForgeSessionID(id string, seed uint64) string {
	d := &Draws{state: splitmix(seed ^ 0x666f7267)} // "forg"
	b := []byte(id)
	fixed := uuidFixed(b)
	for attempt := 0; attempt < 8; attempt++ {
		for start := 0; start < len(b); {
			end := start
			for end < len(b) && isAlnum(b[end]) {
				end++
			}
			if end == start {
				start++
				continue
			}
			if looksRandom(b[start:end]) {
				shuffle(b, start, end, fixed, d)
			}
			start = end
		}
		if string(b) != id {
			return string(b)
		}
	}
	// Nothing in it could be shuffled into something else (a word, one
	// repeated character): an id of mcpchaos's own, plainly not issued.
	return fmt.Sprintf("mcpchaos-forgotten-%016x", d.Uint64())
}

// shuffle permutes b[start:end] in place, leaving the positions fixed
// holds where they are.
func shuffle(b []byte, start, end int, fixed map[int]bool, d *Draws) {
	var pos []int
	for i := start; i < end; i++ {
		if !fixed[i] {
			pos = append(pos, i)
		}
	}
	for i := len(pos) - 1; i > 0; i-- {
		j := d.Intn(i + 1)
		b[pos[i]], b[pos[j]] = b[pos[j]], b[pos[i]]
	}
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// looksRandom tells a run of an id's random part from a word of its
// prefix ("mcp", "session").
func looksRandom(run []byte) bool {
	if len(run) >= 16 {
		return true
	}
	hex := len(run) >= 4
	for _, c := range run {
		if c >= '0' && c <= '9' {
			return true
		}
		if !(c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			hex = false
		}
	}
	return hex
}

// uuidFixed finds a canonical UUID (8-4-4-4-12 hexadecimal digits) in b and
// returns the positions of its version and variant digits.
func uuidFixed(b []byte) map[int]bool {
	const form = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
	for at := 0; at+len(form) <= len(b); at++ {
		ok := true
		for i := 0; i < len(form) && ok; i++ {
			c := b[at+i]
			if form[i] == '-' {
				ok = c == '-'
			} else {
				ok = c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
			}
		}
		if ok {
			return map[int]bool{at + 14: true, at + 19: true}
		}
	}
	return nil
}
