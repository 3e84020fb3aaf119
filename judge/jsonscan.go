package judge

import "encoding/json"

// The protocol checks read a few members of frames the relay's classifier
// has already checked for structure (brackets, commas, string ends,
// literals, numbers). What it does not check is inside strings; the
// functions here check that much and find members without decoding, because
// decoding every result into maps was most of the judge's time and
// allocations. They never index out of range on arbitrary input: a
// transcript can be edited by hand, and a wrong answer about a broken frame
// is acceptable where a panic is not.

// stringsValid checks the inside of the strings of a structurally valid JSON
// frame: no raw control character, only valid escapes. sure is false when
// the frame has a tab, CR or LF before its line end, which may be whitespace
// between tokens or a raw control character in a string: only a full
// validation can tell.
func stringsValid(b []byte) (ok, sure bool) {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c < 0x20 {
			return false, false
		}
		if c != '\\' {
			continue
		}
		if i+1 >= len(b) {
			return false, true
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+5 >= len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return false, true
			}
			i += 5
		default:
			return false, true
		}
	}
	return true, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validJSON is json.Valid for a frame the classifier accepted, at the cost
// of one pass over its bytes in the usual case.
func validJSON(b []byte) bool {
	ok, sure := stringsValid(b)
	if sure {
		return ok
	}
	return json.Valid(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"',
// or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k := skipString(b, j)
				if k < 0 {
					return -1
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

// member returns the value of key in the object obj, nil when obj is not an
// object or has no such member. A repeated key counts the last time, as in
// encoding/json and the classifier. Keys are compared exactly: MCP names are
// case-sensitive, unlike encoding/json's struct fields.
func member(obj []byte, key string) []byte {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	var found []byte
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		ke := skipString(obj, i)
		if ke < 0 {
			return nil
		}
		k := obj[i:ke]
		i = skipSpace(obj, ke)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		i = skipSpace(obj, i+1)
		ve := skipValue(obj, i)
		if ve < 0 {
			return nil
		}
		if keyIs(k, key) {
			found = obj[i:ve]
		}
		i = skipSpace(obj, ve)
		if i >= len(obj) || obj[i] != ',' {
			break
		}
		i = skipSpace(obj, i+1)
	}
	return found
}

// keyIs compares a quoted key with name; a key with escapes ("\u0069d") is
// decoded first, as the classifier does.
func keyIs(quoted []byte, name string) bool {
	inner := quoted[1 : len(quoted)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			return json.Unmarshal(quoted, &s) == nil && s == name
		}
	}
	return string(inner) == name
}

// elements calls fn with each element of the array arr until fn returns
// false; it reports whether arr is an array.
func elements(arr []byte, fn func([]byte) bool) bool {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return true
	}
	for i < len(arr) {
		e := skipValue(arr, i)
		if e < 0 {
			return false
		}
		if !fn(arr[i:e]) {
			return true
		}
		i = skipSpace(arr, e)
		if i >= len(arr) || arr[i] != ',' {
			break
		}
		i = skipSpace(arr, i+1)
	}
	return true
}

// kindOf is the first byte of a JSON value: '{', '[', '"', 't', 'f', 'n',
// or a digit or '-' for numbers; 0 when absent.
func kindOf(v []byte) byte {
	if i := skipSpace(v, 0); i < len(v) {
		return v[i]
	}
	return 0
}
