package wire

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Metadata keys of the stateless (2026-07-28) era that mark a message as such.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// maxDepth bounds nesting so that a hostile frame cannot exhaust the stack. It
// counts the top-level object as one level and is the limit encoding/json has.
const maxDepth = 10000

// jsonSpace is the whitespace JSON allows around values (RFC 8259). Unicode
// spaces such as U+00A0, or '\v' and '\f', are not JSON whitespace.
const jsonSpace = " \t\r\n"

// Classify reads what a frame is from its bytes. It never modifies raw and the
// returned Message keeps raw as its Raw.
//
// The scan is a single pass that checks JSON structure (brackets, commas,
// literals, numbers, string ends) without decoding values it does not need, so
// the cost of a large frame is close to that of finding its string ends. It
// does not check control characters or UTF-8 inside strings; the judge's
// protocol checks do.
func Classify(raw []byte) Message {
	m := Message{Raw: raw}
	b := bytes.Trim(raw, jsonSpace)
	switch {
	case len(b) == 0:
		m.Problem = "empty line"
		return m
	case b[0] == '[':
		m.Problem = "JSON-RPC batch (arrays are not MCP messages)"
		return m
	case b[0] != '{':
		m.Problem = "not a JSON object"
		return m
	}
	var f topFields
	end, err := scanObject(b, 0, 0, f.set)
	if err == nil && end != len(b) {
		err = errTrailing
	}
	if err != nil {
		m.Problem = "not JSON: " + err.Error()
		return m
	}
	f.classify(b, &m)
	return m
}

type span struct{ start, end int }

func (s span) ok() bool { return s.end > s.start }

// topFields remembers where the members that classification needs are.
type topFields struct {
	jsonrpc, id, method, result, errorv, params span
}

func (f *topFields) set(b []byte, key []byte, v span) {
	switch string(key) {
	case "jsonrpc":
		f.jsonrpc = v
	case "id":
		f.id = v
	case "method":
		f.method = v
	case "result":
		f.result = v
	case "error":
		f.errorv = v
	case "params":
		f.params = v
	}
}

func (f *topFields) classify(b []byte, m *Message) {
	if f.id.ok() {
		m.ID = string(b[f.id.start:f.id.end])
	}
	if f.method.ok() {
		name, isString := stringValue(b[f.method.start:f.method.end])
		if !isString {
			m.Problem = `"method" is not a string`
			return
		}
		m.Method = name
	}
	if f.params.ok() && b[f.params.start] == '{' {
		f.readParams(b, m)
	}
	switch m.Method {
	case "initialize", "notifications/initialized":
		m.Era = Stateful
	case "server/discover":
		m.Era = Stateless
	}

	version, _ := stringValue(b[f.jsonrpc.start:f.jsonrpc.end])
	if !f.jsonrpc.ok() || version != "2.0" {
		m.Problem = `"jsonrpc" is not "2.0"`
		return
	}
	idKind := byte(0)
	if f.id.ok() {
		idKind = b[f.id.start]
	}
	validID := idKind == '"' || idKind == '-' || (idKind >= '0' && idKind <= '9')
	switch {
	case f.method.ok() && f.id.ok():
		if !validID {
			m.Problem = "request id is not a string or a number"
			return
		}
		m.Kind = Request
	case f.method.ok():
		m.Kind = Notification
	case f.result.ok() && f.errorv.ok():
		m.Problem = `response has both "result" and "error"`
	case !f.id.ok() && (f.result.ok() || f.errorv.ok()):
		m.Problem = `response has no "id"`
	case f.result.ok():
		if !validID {
			m.Problem = "response id is not a string or a number"
			return
		}
		m.Kind = Response
	case f.errorv.ok():
		if !validID && idKind != 'n' {
			m.Problem = "error id is not a string, a number or null"
			return
		}
		m.Kind = Error
	default:
		m.Problem = `no "method", "result" or "error"`
	}
}

// readParams picks the progress token and the stateless era marker out of
// params. Like the top-level members, a repeated member counts only the last
// time it appears (which is what encoding/json does): a later "_meta" replaces
// an earlier one whole.
func (f *topFields) readParams(b []byte, m *Message) {
	var paramsToken, metaToken span
	stateless := false
	_, _ = scanObject(b, f.params.start, 0, func(b []byte, key []byte, v span) {
		switch string(key) {
		case "progressToken":
			paramsToken = v
		case "_meta":
			metaToken, stateless = span{}, false
			if b[v.start] != '{' {
				return
			}
			_, _ = scanObject(b, v.start, 0, func(b []byte, key []byte, v span) {
				switch string(key) {
				case "progressToken":
					metaToken = v
				case metaProtocolVersion:
					stateless = true
				}
			})
		}
	})
	switch {
	case paramsToken.ok() && m.Method == "notifications/progress":
		m.ProgressToken = string(b[paramsToken.start:paramsToken.end])
	case metaToken.ok():
		m.ProgressToken = string(b[metaToken.start:metaToken.end])
	}
	if stateless {
		m.Era = Stateless
	}
}

// stringValue decodes a JSON string token; the fast path is a string without escapes.
func stringValue(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' {
		return "", false
	}
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(tok, &s) != nil {
		return "", false
	}
	return s, true
}

var (
	errTrailing = errors.New("data after the top-level value")
	errEnd      = errors.New("unexpected end of frame")
	errDepth    = errors.New("nested too deeply")
)

type syntaxError struct {
	msg string
	at  int
}

func (e *syntaxError) Error() string { return e.msg }

func unexpected(b []byte, i int) error {
	if i >= len(b) {
		return errEnd
	}
	return &syntaxError{msg: "unexpected " + quoteByte(b[i]), at: i}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	const hex = "0123456789abcdef"
	return "byte 0x" + string([]byte{hex[c>>4], hex[c&15]})
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// scanObject checks the object starting at b[i] == '{' and calls member for
// each member with its key and value span. The key is the raw bytes between
// the quotes when it has no escapes, and decoded when it has ("\u0069d" is
// "id"). It returns the index after the closing brace.
func scanObject(b []byte, i, depth int, member func(b, key []byte, v span)) (int, error) {
	if depth >= maxDepth {
		return 0, errDepth
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, unexpected(b, i)
		}
		keyEnd, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		keyStart := i
		i = skipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return 0, unexpected(b, i)
		}
		i = skipSpace(b, i+1)
		valEnd, err := skipValue(b, i, depth+1)
		if err != nil {
			return 0, err
		}
		if member != nil {
			key := b[keyStart+1 : keyEnd-1]
			if bytes.IndexByte(key, '\\') >= 0 {
				if s, ok := stringValue(b[keyStart:keyEnd]); ok {
					key = []byte(s)
				}
			}
			member(b, key, span{i, valEnd})
		}
		i = skipSpace(b, valEnd)
		if i >= len(b) {
			return 0, errEnd
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, unexpected(b, i)
		}
	}
}

func scanArray(b []byte, i, depth int) (int, error) {
	if depth >= maxDepth {
		return 0, errDepth
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		end, err := skipValue(b, i, depth+1)
		if err != nil {
			return 0, err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, errEnd
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, unexpected(b, i)
		}
	}
}

func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errEnd
	}
	switch c := b[i]; {
	case c == '{':
		return scanObject(b, i, depth, nil)
	case c == '[':
		return scanArray(b, i, depth)
	case c == '"':
		return skipString(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	}
	return 0, unexpected(b, i)
}

// skipString returns the index after the closing quote of the string at b[i].
// It finds quotes with IndexByte, which is what keeps large frames cheap.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return 0, errEnd
		}
		q += j
		backslashes := 0
		for k := q - 1; k > i && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, unexpected(b, i)
	}
	return i + len(lit), nil
}

func skipNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return 0, unexpected(b, i)
	}
	if i < len(b) && b[i] == '.' {
		d := skipDigits(b, i+1)
		if d == i+1 {
			return 0, unexpected(b, d)
		}
		i = d
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := skipDigits(b, i)
		if d == i {
			return 0, unexpected(b, d)
		}
		i = d
	}
	return i, nil
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
