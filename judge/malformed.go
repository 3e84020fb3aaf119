package judge

import (
	"strings"

	"github.com/mcpchaos/mcpchaos/wire"
)

// paramsRequired are the methods whose params the MCP schema requires
// (2025-11-25; the 2026-07-28 revision requires them of every request,
// for their _meta).
var paramsRequired = map[string]bool{
	"initialize": true, "tools/call": true, "resources/read": true, "resources/subscribe": true,
	"resources/unsubscribe": true, "prompts/get": true, "completion/complete": true,
	"logging/setLevel": true, "tasks/get": true, "tasks/result": true, "tasks/cancel": true,
	"sampling/createMessage": true, "elicitation/create": true,
}

// malformedRequest says what breaks a request's envelope as JSON-RPC and
// the MCP schema give it, "" for a well-formed one: params that are not an
// object (JSON-RPC allows an array, MCP does not; null neither allows), no
// params where the method requires them, a tools/call whose name is there
// but not a string. A server must still answer such a request, with an error
// (JSON-RPC 2.0 §5: -32600 Invalid Request, -32602 Invalid params); one that
// drops it instead is judged apart from one whose handler hangs (see
// reports.RuleMalformedUnanswered).
func malformedRequest(e *wire.Event) string {
	b, err := e.Bytes()
	if err != nil {
		return ""
	}
	if loneSurrogate(e.Raw) {
		return "a lone surrogate escape in a string, which I-JSON forbids (RFC 7493 §2.1) and RFC 8259 §8.2 leaves to the receiver"
	}
	params := member(b, "params")
	switch {
	case params == nil && paramsRequired[e.Method]:
		return "no params"
	case params == nil:
		return ""
	}
	switch kindOf(params) {
	case '{':
	case 'n':
		return "params null"
	case '[':
		return "params an array"
	default:
		return "params neither an object nor an array"
	}
	if e.Method == "tools/call" {
		if name := member(params, "name"); name != nil && kindOf(name) != '"' {
			return "a tool name that is not a string"
		}
	}
	return ""
}

// loneSurrogate says raw holds a \uD800-\uDFFF escape that is not half of
// a pair: no UTF-8 can carry it, and what a receiver makes of it is its
// own (Python decodes it, then fails to encode its answer).
func loneSurrogate(raw string) bool {
	for i := 0; ; {
		j := strings.Index(raw[i:], `\u`)
		if j < 0 {
			return false
		}
		i += j
		// An escaped backslash before it makes it text, not an escape.
		if escapedBackslash(raw, i) {
			i += 2
			continue
		}
		hi, ok := hex4(raw, i+2)
		switch {
		case !ok:
		case hi >= 0xDC00 && hi <= 0xDFFF:
			return true
		case hi >= 0xD800 && hi <= 0xDBFF:
			if lo, ok := hex4(raw, i+8); !ok || !strings.HasPrefix(raw[i+6:], `\u`) || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
		i += 2
	}
}

// escapedBackslash says the backslash at i is itself escaped: an odd run
// of backslashes before it.
func escapedBackslash(s string, i int) bool {
	n := 0
	for k := i - 1; k >= 0 && s[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

func hex4(s string, i int) (int, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
