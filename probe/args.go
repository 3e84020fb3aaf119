package probe

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Bounds on what a schema can make Arguments build: a server's schema is
// input we do not control, and a recursive or absurd one must not exhaust the
// stack or memory of the test run.
const (
	maxSchemaDepth  = 32
	maxValues       = 10000
	maxStringLength = 1 << 16
	maxItems        = 1024
)

// placeholder is the value of a string, or of a value whose type the schema
// does not say; it is easy to spot in a transcript.
const placeholder = "mcpchaos"

// formatValues are strings that pass the common JSON Schema formats; a server
// that validates them would otherwise reject every generated call.
var formatValues = map[string]string{
	"uri":           "file:///tmp/mcpchaos",
	"uri-reference": "file:///tmp/mcpchaos",
	"iri":           "file:///tmp/mcpchaos",
	"iri-reference": "file:///tmp/mcpchaos",
	"email":         "mcpchaos@example.com",
	"idn-email":     "mcpchaos@example.com",
	"date-time":     "2026-01-01T00:00:00Z",
	"date":          "2026-01-01",
	"time":          "00:00:00Z",
	"duration":      "PT1S",
	"uuid":          "00000000-0000-4000-8000-000000000000",
	"ipv4":          "127.0.0.1",
	"ipv6":          "::1",
	"hostname":      "example.com",
	"idn-hostname":  "example.com",
}

// Arguments returns the arguments the probe passes to a tool with the given
// inputSchema: an object with every required property set to the simplest
// value the schema allows (an enum's first value, a const, "mcpchaos", 1,
// true, the fewest array items). The aim is a call the server accepts, so that
// the fault under test, not a validation error, decides what happens. It is
// deterministic, and returns {} for a schema it cannot read.
func Arguments(schema json.RawMessage) json.RawMessage {
	return arguments(schema, "")
}

// MarkedArguments are Arguments with marker in place of the placeholder in
// every free string (one no format, enum, const or pattern constrains),
// optional top-level strings included: in a run of several sessions, an
// answer that echoes a string carries the marker of the session that sent
// it, and the judge across sessions can tell whose it is.
func MarkedArguments(schema json.RawMessage, marker string) json.RawMessage {
	return arguments(schema, marker)
}

func arguments(schema json.RawMessage, marker string) json.RawMessage {
	var root map[string]any
	d := json.NewDecoder(bytes.NewReader(schema))
	// Numbers stay exact, so an enum of large integers comes back unchanged.
	d.UseNumber()
	if err := d.Decode(&root); err != nil || root == nil {
		return json.RawMessage("{}")
	}
	g := generator{root: root, budget: maxValues, marker: marker}
	obj, ok := g.value(root, 0).(map[string]any)
	if !ok {
		// Tool arguments are an object whatever the schema says.
		obj = map[string]any{}
	}
	if marker != "" {
		g.markOptional(root, obj)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return json.RawMessage("{}")
	}
	return out
}

type generator struct {
	root   map[string]any
	budget int
	// marker, if set, replaces the placeholder in free strings.
	marker string
}

// markOptional sets the optional top-level properties that are free
// strings to the marker: an echo tool's text is often optional.
func (g *generator) markOptional(root, obj map[string]any) {
	props, _ := root["properties"].(map[string]any)
	for name, p := range props {
		sub, ok := p.(map[string]any)
		if _, set := obj[name]; set || !ok {
			continue
		}
		if sub = g.resolve(sub); freeString(sub) {
			obj[name] = g.stringFor(sub)
		}
	}
}

// freeString says a schema is a string nothing but its length constrains.
func freeString(schema map[string]any) bool {
	if schemaType(schema) != "string" {
		return false
	}
	for _, k := range []string{"enum", "const", "format", "pattern", "anyOf", "oneOf", "allOf"} {
		if _, ok := schema[k]; ok {
			return false
		}
	}
	return true
}

func (g *generator) value(schema map[string]any, depth int) any {
	g.budget--
	if depth > maxSchemaDepth || g.budget < 0 {
		return nil
	}
	schema = g.resolve(schema)
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if branches, ok := schema[key].([]any); ok && len(branches) > 0 {
			// The branch narrows its parent (which may carry the type or the
			// properties), so it is merged in rather than used alone.
			rest := without(schema, key)
			return g.value(merge(rest, g.resolve(firstBranch(branches))), depth+1)
		}
	}
	if all, ok := schema["allOf"].([]any); ok && len(all) > 0 {
		merged := without(schema, "allOf")
		for _, b := range all {
			if m, ok := b.(map[string]any); ok {
				merged = merge(merged, g.resolve(m))
			}
		}
		return g.value(merged, depth+1)
	}
	switch schemaType(schema) {
	case "string":
		return g.stringFor(schema)
	case "integer":
		return integerFor(schema)
	case "number":
		return numberFor(schema)
	case "boolean":
		return true
	case "null":
		return nil
	case "array":
		return g.arrayFor(schema, depth)
	case "object":
		return g.objectFor(schema, depth)
	}
	return g.text()
}

// text is what a free string holds: the marker, or the placeholder.
func (g *generator) text() string {
	if g.marker != "" {
		return g.marker
	}
	return placeholder
}

// resolve follows local "$ref"s ("#/$defs/Name"), which is how pydantic and
// other generators express nested models. Siblings of $ref are kept.
func (g *generator) resolve(schema map[string]any) map[string]any {
	for range maxSchemaDepth {
		ref, ok := schema["$ref"].(string)
		if !ok {
			return schema
		}
		rest := without(schema, "$ref")
		target, ok := g.lookup(ref)
		if !ok {
			return rest
		}
		schema = merge(rest, target)
	}
	return without(schema, "$ref")
}

func (g *generator) lookup(ref string) (map[string]any, bool) {
	pointer, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	var node any = g.root
	for _, part := range strings.Split(pointer, "/")[1:] {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := node.(map[string]any)
		if !ok {
			return nil, false
		}
		node = m[part]
	}
	m, ok := node.(map[string]any)
	return m, ok
}

func (g *generator) arrayFor(schema map[string]any, depth int) []any {
	n := 0
	if v, ok := number(schema["minItems"]); ok && v > 0 {
		n = int(min(v, maxItems))
	}
	prefix, _ := schema["prefixItems"].([]any)
	if prefix == nil {
		// Draft 4 to 2019-09 tuples: "items" as an array.
		prefix, _ = schema["items"].([]any)
	}
	rest, _ := schema["items"].(map[string]any)
	if rest == nil {
		rest, _ = schema["additionalItems"].(map[string]any)
	}
	items := make([]any, 0, n)
	for i := 0; i < n && g.budget > 0; i++ {
		item := rest
		if i < len(prefix) {
			item, _ = prefix[i].(map[string]any)
		}
		items = append(items, g.value(item, depth+1))
	}
	return items
}

func (g *generator) objectFor(schema map[string]any, depth int) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	required, _ := schema["required"].([]any)
	out := make(map[string]any, len(required))
	for _, r := range required {
		name, ok := r.(string)
		if !ok {
			continue
		}
		// A required property without a schema (or with the schema true)
		// gets the placeholder, through the missing type.
		sub, _ := props[name].(map[string]any)
		out[name] = g.value(sub, depth+1)
	}
	return out
}

// schemaType is the type a value is generated for: the first non-null one of
// a type array, or what the keywords present imply when there is no type.
func schemaType(schema map[string]any) string {
	switch t := schema["type"].(type) {
	case string:
		return t
	case []any:
		first := ""
		for _, v := range t {
			s, _ := v.(string)
			if s != "" && s != "null" {
				return s
			}
			if first == "" {
				first = s
			}
		}
		return first
	}
	switch {
	case schema["properties"] != nil || schema["required"] != nil:
		return "object"
	case schema["items"] != nil || schema["prefixItems"] != nil:
		return "array"
	}
	return ""
}

// firstBranch prefers the first branch that is not just null: optional
// parameters are often written anyOf [T, null], and null may be refused where
// the property is required.
func firstBranch(branches []any) map[string]any {
	for _, b := range branches {
		if m, ok := b.(map[string]any); ok && m["type"] != "null" {
			return m
		}
	}
	m, _ := branches[0].(map[string]any)
	return m
}

func (g *generator) stringFor(schema map[string]any) string {
	s := g.text()
	if _, constrained := schema["pattern"]; constrained {
		// A marker need not match a pattern the placeholder was tried on.
		s = placeholder
	}
	if f, ok := schema["format"].(string); ok && formatValues[f] != "" {
		s = formatValues[f]
	}
	if v, ok := number(schema["minLength"]); ok && int(min(v, maxStringLength)) > len(s) {
		n := int(min(v, maxStringLength))
		s = strings.Repeat(s, n/len(s)+1)[:n]
	}
	if v, ok := number(schema["maxLength"]); ok && v >= 0 && int(v) < len(s) {
		s = s[:int(v)]
	}
	return s
}

func integerFor(schema map[string]any) any {
	b := boundsOf(schema)
	v := 1.0
	if b.hasMin {
		v = max(v, math.Ceil(b.min))
		if b.minExclusive && v <= b.min {
			v = math.Floor(b.min) + 1
		}
	}
	if b.hasMax {
		if v > b.max {
			v = math.Floor(b.max)
		}
		if b.maxExclusive && v >= b.max {
			v = math.Ceil(b.max) - 1
		}
	}
	if m, ok := number(schema["multipleOf"]); ok && m > 0 && m == math.Trunc(m) {
		if up := math.Ceil(v/m) * m; !b.hasMax || up < b.max || (up == b.max && !b.maxExclusive) {
			v = up
		} else {
			v = math.Floor(v/m) * m
		}
	}
	if math.Abs(v) < 1<<53 {
		return int64(v)
	}
	return json.Number(strconv.FormatFloat(v, 'f', -1, 64))
}

func numberFor(schema map[string]any) float64 {
	b := boundsOf(schema)
	v := 1.0
	if b.hasMin {
		v = max(v, b.min)
		if b.minExclusive && v <= b.min {
			v = b.min + 1
		}
	}
	if b.hasMax {
		if v > b.max {
			v = b.max
		}
		if b.maxExclusive && v >= b.max {
			if b.hasMin {
				v = (b.min + b.max) / 2
			} else {
				v = b.max - 1
			}
		}
	}
	if m, ok := number(schema["multipleOf"]); ok && m > 0 {
		if up := math.Ceil(v/m) * m; !b.hasMax || up < b.max || (up == b.max && !b.maxExclusive) {
			v = up
		} else {
			v = math.Floor(v/m) * m
		}
	}
	return v
}

type bounds struct {
	min, max                   float64
	hasMin, hasMax             bool
	minExclusive, maxExclusive bool
}

// boundsOf reads both spellings of exclusive bounds: a number of its own
// (draft 6 and later) and a boolean next to minimum/maximum (draft 4).
func boundsOf(schema map[string]any) bounds {
	var b bounds
	b.min, b.hasMin = number(schema["minimum"])
	b.max, b.hasMax = number(schema["maximum"])
	if v, ok := number(schema["exclusiveMinimum"]); ok && (!b.hasMin || v >= b.min) {
		b.min, b.hasMin, b.minExclusive = v, true, true
	} else if schema["exclusiveMinimum"] == true && b.hasMin {
		b.minExclusive = true
	}
	if v, ok := number(schema["exclusiveMaximum"]); ok && (!b.hasMax || v <= b.max) {
		b.max, b.hasMax, b.maxExclusive = v, true, true
	} else if schema["exclusiveMaximum"] == true && b.hasMax {
		b.maxExclusive = true
	}
	return b
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	case float64:
		return n, true
	}
	return 0, false
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// merge combines two schemas that must both hold: b's keywords win, except
// that required lists are joined and properties are merged.
func merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		switch k {
		case "required":
			ra, _ := a["required"].([]any)
			rb, _ := v.([]any)
			out[k] = append(append([]any{}, ra...), rb...)
		case "properties":
			pa, _ := a["properties"].(map[string]any)
			pb, _ := v.(map[string]any)
			props := make(map[string]any, len(pa)+len(pb))
			for name, s := range pa {
				props[name] = s
			}
			for name, s := range pb {
				props[name] = s
			}
			out[k] = props
		default:
			out[k] = v
		}
	}
	return out
}
