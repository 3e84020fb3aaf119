package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
)

// Metadata keys of the stateless (2026-07-28) era that mark a message as such.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// maxDepth bounds nesting so that a hostile frame cannot exhaust the stack. It
// counts the top-level object as one level and is the limit encoding/json has.
const maxDepth = 10000

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
	b := trimSpace(raw)
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
	sc := scanner{b: b}
	end, err := sc.object(0, 0, inTop)
	if err == nil && end != len(b) {
		err = errTrailing
	}
	if err != nil {
		m.Problem = "not JSON: " + err.Error()
		return m
	}
	sc.classify(&m)
	return m
}

// trimSpace trims JSON whitespace from both ends of b. bytes.Trim built its
// cut set on every call, which was a tenth of Classify's time on a small
// frame.
func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// isSpace tells the whitespace JSON allows around values (RFC 8259): Unicode
// spaces such as U+00A0, or '\v' and '\f', are not. Most bytes it is asked
// about are tokens, which the first comparison tells.
func isSpace(c byte) bool { return c <= ' ' && (c == ' ' || c == '\t' || c == '\r' || c == '\n') }

type span struct{ start, end int }

func (s span) ok() bool { return s.end > s.start }

// scanner checks a frame's JSON structure in one pass and remembers where
// the members classification needs are: the top-level members, and in
// params the progress token and the stateless era's _meta marker. Like
// encoding/json, a repeated member counts only the last time it appears: a
// later "params" or "_meta" replaces an earlier one whole.
type scanner struct {
	b                                           []byte
	jsonrpc, id, method, result, errorv, params span
	paramsToken, metaToken                      span
	stateless                                   bool
	// find names the member an object scanned inFind looks for, and found
	// is where its (last) value is.
	find  string
	found span
}

// within says whose members an object holds, and so which keys matter.
type within uint8

const (
	inOther within = iota
	inTop
	inParams
	inMeta
	inFind
)

// member notes the member key of an object in w whose value starts at b[i],
// and scans that value.
func (s *scanner) member(w within, key []byte, i, depth int) (int, error) {
	b := s.b
	switch w {
	case inTop:
		var v *span
		switch string(key) {
		case "jsonrpc":
			v = &s.jsonrpc
		case "id":
			v = &s.id
		case "method":
			v = &s.method
		case "result":
			v = &s.result
		case "error":
			v = &s.errorv
		case "params":
			s.paramsToken, s.metaToken, s.stateless = span{}, span{}, false
			v = &s.params
			if i < len(b) && b[i] == '{' {
				end, err := s.object(i, depth, inParams)
				*v = span{i, end}
				return end, err
			}
		}
		end, err := s.value(i, depth)
		if v != nil {
			*v = span{i, end}
		}
		return end, err
	case inParams:
		switch string(key) {
		case "progressToken":
			end, err := s.value(i, depth)
			s.paramsToken = span{i, end}
			return end, err
		case "_meta":
			s.metaToken, s.stateless = span{}, false
			if i < len(b) && b[i] == '{' {
				return s.object(i, depth, inMeta)
			}
		}
	case inFind:
		end, err := s.value(i, depth)
		if string(key) == s.find {
			s.found = span{i, end}
		}
		return end, err
	case inMeta:
		switch string(key) {
		case "progressToken":
			end, err := s.value(i, depth)
			s.metaToken = span{i, end}
			return end, err
		case metaProtocolVersion:
			s.stateless = true
		}
	}
	return s.value(i, depth)
}

func (s *scanner) classify(m *Message) {
	b := s.b
	if s.id.ok() {
		m.ID = string(b[s.id.start:s.id.end])
	}
	if s.method.ok() {
		name, isString := stringValue(b[s.method.start:s.method.end])
		if !isString {
			m.Problem = `"method" is not a string`
			return
		}
		m.Method = name
	}
	if s.params.ok() && b[s.params.start] == '{' {
		switch {
		case s.paramsToken.ok() && m.Method == "notifications/progress":
			m.ProgressToken = string(b[s.paramsToken.start:s.paramsToken.end])
		case s.metaToken.ok():
			m.ProgressToken = string(b[s.metaToken.start:s.metaToken.end])
		}
		if s.stateless {
			m.Era = Stateless
		}
	}
	switch m.Method {
	case "initialize", "notifications/initialized":
		m.Era = Stateful
	case "server/discover":
		m.Era = Stateless
	}

	if !s.jsonrpc.ok() || !isVersion2(b[s.jsonrpc.start:s.jsonrpc.end]) {
		m.Problem = `"jsonrpc" is not "2.0"`
		return
	}
	idKind := byte(0)
	if s.id.ok() {
		idKind = b[s.id.start]
	}
	validID := idKind == '"' || idKind == '-' || (idKind >= '0' && idKind <= '9')
	switch {
	case s.method.ok() && s.id.ok():
		if !validID {
			m.Problem = "request id is not a string or a number"
			return
		}
		m.Kind = Request
	case s.method.ok():
		m.Kind = Notification
	case s.result.ok() && s.errorv.ok():
		m.Problem = `response has both "result" and "error"`
	case !s.id.ok() && (s.result.ok() || s.errorv.ok()):
		m.Problem = `response has no "id"`
	case s.result.ok():
		if !validID {
			m.Problem = "response id is not a string or a number"
			return
		}
		m.Kind = Response
	case s.errorv.ok():
		if !validID && idKind != 'n' {
			m.Problem = "error id is not a string, a number or null"
			return
		}
		m.Kind = Error
	default:
		m.Problem = `no "method", "result" or "error"`
	}
}

// isVersion2 reports whether tok is a JSON string that decodes to "2.0",
// without allocating for the form every peer sends.
func isVersion2(tok []byte) bool {
	if string(tok) == `"2.0"` {
		return true
	}
	v, _ := stringValue(tok)
	return v == "2.0"
}

// stringValue decodes a JSON string token; the fast path is a string without escapes.
func stringValue(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' {
		return "", false
	}
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return methodName(inner), true
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
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// object checks the object starting at b[i] == '{', whose members matter as
// w says, and returns the index after its closing brace. A key is matched
// as the raw bytes between its quotes when it has no escapes, and decoded
// when it has ("\u0069d" is "id").
func (s *scanner) object(i, depth int, w within) (int, error) {
	if depth >= maxDepth {
		return 0, errDepth
	}
	b := s.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, unexpected(b, i)
		}
		keyEnd, escaped, err := scanString(b, i)
		if err != nil {
			return 0, err
		}
		keyStart := i
		i = skipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return 0, unexpected(b, i)
		}
		i = skipSpace(b, i+1)
		var valEnd int
		if w == inOther {
			valEnd, err = s.value(i, depth+1)
		} else {
			key := b[keyStart+1 : keyEnd-1]
			if escaped {
				if k, ok := stringValue(b[keyStart:keyEnd]); ok {
					key = []byte(k)
				}
			}
			valEnd, err = s.member(w, key, i, depth+1)
		}
		if err != nil {
			return 0, err
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

func (s *scanner) array(i, depth int) (int, error) {
	if depth >= maxDepth {
		return 0, errDepth
	}
	b := s.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		end, err := s.value(i, depth+1)
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

// value checks the value starting at b[i] and returns the index after it.
func (s *scanner) value(i, depth int) (int, error) {
	b := s.b
	if i >= len(b) {
		return 0, errEnd
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		return s.object(i, depth, inOther)
	case c == '[':
		return s.array(i, depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	}
	return 0, unexpected(b, i)
}

// skipString returns the index after the closing quote of the string at b[i].
func skipString(b []byte, i int) (int, error) {
	end, _, err := scanString(b, i)
	return end, err
}

// scanString is skipString that also tells whether the string has escapes.
// It looks at eight bytes at a time for the first shortString bytes, where
// keys, methods and ids end; past them it finds quotes with IndexByte, which
// is what keeps large frames cheap.
func scanString(b []byte, i int) (end int, escaped bool, err error) {
	j := i + 1
	for limit := min(len(b), j+shortString); j+8 <= limit; {
		w := binary.LittleEndian.Uint64(b[j:])
		hit := hasZero(w^(ones*'"')) | hasZero(w^(ones*'\\'))
		if hit == 0 {
			j += 8
			continue
		}
		j += bits.TrailingZeros64(hit) / 8
		if b[j] == '"' {
			return j + 1, escaped, nil
		}
		escaped = true
		j += 2 // the escaped byte cannot end the string
	}
	for {
		if j > len(b) {
			return 0, false, errEnd
		}
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return 0, false, errEnd
		}
		q += j
		backslashes := 0
		for k := q - 1; k > i && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			// Only a key is asked about its escapes, and keys are short:
			// a long string is said to have some rather than read twice.
			escaped = escaped || backslashes > 0 || q-i > maxPlainKey || bytes.IndexByte(b[i:q], '\\') >= 0
			return q + 1, escaped, nil
		}
		j = q + 1
	}
}

// shortString is how far scanString looks eight bytes at a time before
// calling IndexByte, whose call costs more than a short look.
const shortString = 32

// maxPlainKey is the longest string scanString looks through for escapes.
const maxPlainKey = 256

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
