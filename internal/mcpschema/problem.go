package mcpschema

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Problem is one way a message breaks its schema.
type Problem struct {
	// Pointer is the JSON pointer (RFC 6901) of the offending value in
	// the message, e.g. /result/content/0/type; "" is the whole message.
	Pointer string
	// Keyword is the schema keyword that failed (required, type, const,
	// additionalProperties, ...), or json for bytes that are not JSON,
	// or schema if the vendored schema itself did not load.
	Keyword string
	// Message says what is wrong, in English.
	Message string
}

func (p Problem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "(root)"
	}
	return ptr + ": " + p.Message
}

// maxProblems caps the problems of one message: past a few, more of them
// say the same thing and drown the report.
const maxProblems = 5

var english = message.NewPrinter(language.English)

// validate decodes raw with json.Number, so that integers past 2^53 and
// fractions are judged exactly, and checks it against s.
func validate(s *jsonschema.Schema, raw []byte) []Problem {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []Problem{{Keyword: "json", Message: "not JSON: " + err.Error()}}
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Keyword: "schema", Message: err.Error()}}
	}
	return problems(ve)
}

type group struct {
	ptr, keyword string
	kind         jsonschema.ErrorKind
}

type leaf struct {
	loc  []string
	kind jsonschema.ErrorKind
}

// problems flattens e to its leaves, the errors that say what is wrong
// (the others only say that an allOf, anyOf or $ref failed), the deepest
// first: the deeper the pointer, the more precise the problem. The
// branches of an anyOf each reject the same value, so at one pointer
// const, enum and type failures are said once, with every value or type
// a branch would have taken, and a missing property is not said again
// where another failure at that pointer names it with more. Then
// duplicates are dropped and the list is cut to maxProblems.
func problems(e *jsonschema.ValidationError) []Problem {
	var leaves []leaf
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, leaf{e.InstanceLocation, e.ErrorKind})
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(e)
	// The validator's causes come in the order of its maps (properties),
	// and a report must say the same of the same message every time.
	sort.SliceStable(leaves, func(i, j int) bool {
		a, b := leaves[i], leaves[j]
		if len(a.loc) != len(b.loc) {
			return len(a.loc) > len(b.loc)
		}
		// Within one pointer the validator's order is the schema's
		// (anyOf branches in turn), which is stable and reads best.
		return pointer(a.loc) < pointer(b.loc)
	})

	var groups []*group
	merged := map[[2]string]*group{}
	for _, l := range leaves {
		ptr := pointer(l.loc)
		var key [2]string
		switch k := l.kind.(type) {
		case *kind.Const:
			key = [2]string{ptr, "const"}
			if g := merged[key]; g != nil {
				e := g.kind.(*kind.Enum)
				e.Want = appendNew(e.Want, k.Want)
				continue
			}
			l.kind = &kind.Enum{Got: k.Got, Want: []any{k.Want}}
		case *kind.Enum:
			key = [2]string{ptr, "enum"}
			if g := merged[key]; g != nil {
				e := g.kind.(*kind.Enum)
				for _, w := range k.Want {
					e.Want = appendNew(e.Want, w)
				}
				continue
			}
			l.kind = &kind.Enum{Got: k.Got, Want: slices.Clone(k.Want)}
		case *kind.Type:
			key = [2]string{ptr, "type"}
			if g := merged[key]; g != nil {
				t := g.kind.(*kind.Type)
				for _, w := range k.Want {
					if !slices.Contains(t.Want, w) {
						t.Want = append(t.Want, w)
					}
				}
				continue
			}
			l.kind = &kind.Type{Got: k.Got, Want: slices.Clone(k.Want)}
		}
		g := &group{ptr, keyword(l.kind), l.kind}
		if key[1] != "" {
			g.keyword = key[1]
			merged[key] = g
		}
		groups = append(groups, g)
	}

	var out []Problem
	for _, g := range groups {
		if coveredRequired(g.ptr, g.kind, groups) {
			continue
		}
		p := Problem{Pointer: g.ptr, Keyword: g.keyword, Message: describe(g.kind)}
		if slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
		if len(out) == maxProblems {
			break
		}
	}
	return out
}

// coveredRequired reports whether k is a required failure whose missing
// properties another required failure at ptr names too (an envelope's
// Result wants resultType, the method's own result wants it and more).
func coveredRequired(ptr string, k jsonschema.ErrorKind, groups []*group) bool {
	r, ok := k.(*kind.Required)
	if !ok {
		return false
	}
	for _, g := range groups {
		o, ok := g.kind.(*kind.Required)
		if !ok || o == r || g.ptr != ptr || len(o.Missing) <= len(r.Missing) {
			continue
		}
		if !slices.ContainsFunc(r.Missing, func(m string) bool { return !slices.Contains(o.Missing, m) }) {
			return true
		}
	}
	return false
}

func appendNew(list []any, v any) []any {
	for _, w := range list {
		if reflect.DeepEqual(w, v) {
			return list
		}
	}
	return append(list, v)
}

// describe is k's English message. jsonschema prints the numbers of a
// numeric bound as float64s, so a bound past 2^53 would be misquoted (the
// check itself is exact): those are said here with the numbers exact.
func describe(k jsonschema.ErrorKind) string {
	var got, want *big.Rat
	switch k := k.(type) {
	case *kind.Minimum:
		got, want = k.Got, k.Want
	case *kind.Maximum:
		got, want = k.Got, k.Want
	case *kind.ExclusiveMinimum:
		got, want = k.Got, k.Want
	case *kind.ExclusiveMaximum:
		got, want = k.Got, k.Want
	case *kind.MultipleOf:
		got, want = k.Got, k.Want
	default:
		return k.LocalizedString(english)
	}
	return fmt.Sprintf("%s: got %s, want %s", keyword(k), decimal(got), decimal(want))
}

// decimal writes r, a number read from JSON, in full.
func decimal(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	for prec := 1; prec <= 400; prec++ {
		s := r.FloatString(prec)
		if back, ok := new(big.Rat).SetString(s); ok && back.Cmp(r) == 0 {
			return s
		}
	}
	return r.RatString()
}

func keyword(k jsonschema.ErrorKind) string {
	if path := k.KeywordPath(); len(path) > 0 {
		if path[0] == "dependency" { // jsonschema's name for draft-07's dependencies
			return "dependencies"
		}
		return path[0]
	}
	if _, ok := k.(*kind.FalseSchema); ok {
		return "false"
	}
	return ""
}

// pointer is the JSON pointer (RFC 6901) of an instance location.
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(escapeToken(tok))
	}
	return b.String()
}
