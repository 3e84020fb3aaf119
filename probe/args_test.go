package probe

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestArguments(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"not JSON", `{`, `{}`},
		{"not an object", `[1]`, `{}`},
		{"empty", `{}`, `{}`},
		{"no required", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{}`},
		{"string", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"a":"mcpchaos"}`},
		{"string minLength", `{"required":["a"],"properties":{"a":{"type":"string","minLength":20}}}`, `{"a":"mcpchaosmcpchaosmcpc"}`},
		{"string maxLength", `{"required":["a"],"properties":{"a":{"type":"string","maxLength":3}}}`, `{"a":"mcp"}`},
		{"string formats", `{"required":["u","e","d","x"],"properties":{
			"u":{"type":"string","format":"uri"},
			"e":{"type":"string","format":"email"},
			"d":{"type":"string","format":"date-time"},
			"x":{"type":"string","format":"unheard-of"}}}`,
			`{"d":"2026-01-01T00:00:00Z","e":"mcpchaos@example.com","u":"file:///tmp/mcpchaos","x":"mcpchaos"}`},
		{"enum first", `{"required":["a"],"properties":{"a":{"type":"string","enum":["red","green"]}}}`, `{"a":"red"}`},
		{"enum keeps large integers", `{"required":["a"],"properties":{"a":{"enum":[12345678901234567890]}}}`, `{"a":12345678901234567890}`},
		{"const", `{"required":["a"],"properties":{"a":{"const":{"k":[1,2]}}}}`, `{"a":{"k":[1,2]}}`},
		{"integer", `{"required":["a"],"properties":{"a":{"type":"integer"}}}`, `{"a":1}`},
		{"integer minimum below 1", `{"required":["a"],"properties":{"a":{"type":"integer","minimum":0}}}`, `{"a":1}`},
		{"integer minimum", `{"required":["a"],"properties":{"a":{"type":"integer","minimum":7.5}}}`, `{"a":8}`},
		{"integer maximum", `{"required":["a"],"properties":{"a":{"type":"integer","minimum":-10,"maximum":-3}}}`, `{"a":-3}`},
		{"integer exclusive bounds", `{"required":["a","b"],"properties":{
			"a":{"type":"integer","exclusiveMinimum":1},
			"b":{"type":"integer","exclusiveMaximum":1}}}`, `{"a":2,"b":0}`},
		{"integer draft 4 exclusive", `{"required":["a"],"properties":{"a":{"type":"integer","minimum":1,"exclusiveMinimum":true}}}`, `{"a":2}`},
		{"integer multipleOf", `{"required":["a"],"properties":{"a":{"type":"integer","multipleOf":5}}}`, `{"a":5}`},
		{"number", `{"required":["a","b","c"],"properties":{
			"a":{"type":"number"},
			"b":{"type":"number","minimum":2.5},
			"c":{"type":"number","minimum":0,"exclusiveMaximum":1}}}`, `{"a":1,"b":2.5,"c":0.5}`},
		{"boolean", `{"required":["a"],"properties":{"a":{"type":"boolean"}}}`, `{"a":true}`},
		{"null", `{"required":["a"],"properties":{"a":{"type":"null"}}}`, `{"a":null}`},
		{"array without minItems", `{"required":["a"],"properties":{"a":{"type":"array","items":{"type":"string"}}}}`, `{"a":[]}`},
		{"array minItems", `{"required":["a"],"properties":{"a":{"type":"array","minItems":2,"items":{"type":"integer"}}}}`, `{"a":[1,1]}`},
		{"array prefixItems", `{"required":["a"],"properties":{"a":{"type":"array","minItems":3,
			"prefixItems":[{"type":"string"},{"type":"boolean"}],"items":{"type":"integer"}}}}`, `{"a":["mcpchaos",true,1]}`},
		{"array minItems is capped", `{"required":["a"],"properties":{"a":{"type":"array","minItems":1e9,"items":{"const":0}}}}`, ``},
		{"nested object", `{"required":["o"],"properties":{"o":{"type":"object","required":["x"],"properties":{"x":{"type":"integer"},"y":{"type":"string"}}}}}`, `{"o":{"x":1}}`},
		{"required without a property schema", `{"type":"object","required":["a"]}`, `{"a":"mcpchaos"}`},
		{"missing type", `{"required":["a"],"properties":{"a":{"description":"anything"}}}`, `{"a":"mcpchaos"}`},
		{"type array", `{"required":["a","b"],"properties":{"a":{"type":["null","integer"]},"b":{"type":["null"]}}}`, `{"a":1,"b":null}`},
		{"anyOf first branch", `{"required":["a"],"properties":{"a":{"anyOf":[{"type":"integer"},{"type":"string"}]}}}`, `{"a":1}`},
		{"anyOf skips null", `{"required":["a"],"properties":{"a":{"anyOf":[{"type":"null"},{"type":"boolean"}]}}}`, `{"a":true}`},
		{"oneOf", `{"required":["a"],"properties":{"a":{"oneOf":[{"type":"string","format":"email"},{"type":"integer"}]}}}`, `{"a":"mcpchaos@example.com"}`},
		{"oneOf narrows the parent", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"oneOf":[{"required":["b"]},{"required":["a"]}]}`, `{"b":1}`},
		{"allOf merges", `{"allOf":[{"required":["a"],"properties":{"a":{"type":"integer"}}},{"required":["b"],"properties":{"b":{"type":"boolean"}}}]}`, `{"a":1,"b":true}`},
		{"$ref to $defs", `{"type":"object","required":["p"],"properties":{"p":{"$ref":"#/$defs/Point"}},
			"$defs":{"Point":{"type":"object","required":["x","y"],"properties":{"x":{"type":"number"},"y":{"type":"number"}}}}}`, `{"p":{"x":1,"y":1}}`},
		{"$ref to definitions with escapes", `{"required":["p"],"properties":{"p":{"$ref":"#/definitions/a~1b"}},"definitions":{"a/b":{"type":"boolean"}}}`, `{"p":true}`},
		{"$ref unresolvable", `{"required":["p"],"properties":{"p":{"$ref":"https://example.com/schema"}}}`, `{"p":"mcpchaos"}`},
		{"recursive $ref ends", `{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","required":["next"],"properties":{"next":{"$ref":"#/$defs/Node"}}}}}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Arguments(json.RawMessage(tt.schema))
			if !json.Valid(got) || got[0] != '{' {
				t.Fatalf("Arguments(%s) = %s, want a JSON object", tt.schema, got)
			}
			if again := Arguments(json.RawMessage(tt.schema)); string(again) != string(got) {
				t.Errorf("not deterministic: %s, then %s", got, again)
			}
			if tt.want == "" {
				// Only bounded: the test is that it returns, and how big.
				if len(got) > 1<<20 {
					t.Errorf("Arguments(%s) is %d bytes", tt.schema, len(got))
				}
				return
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Arguments(%s) (-want +got):\n%s", tt.schema, diff)
			}
		})
	}
}

// In a run of several sessions every free string carries the session's
// marker, optional ones at the top level included, so that an echo names
// the session it came from; strings a format, enum or pattern constrains
// keep the values a server accepts.
func TestMarkedArguments(t *testing.T) {
	const m = "mcpchaos-s2-00ff00"
	tests := []struct {
		name, schema, want string
	}{
		{"required string", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"a":"mcpchaos-s2-00ff00"}`},
		{"optional string", `{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}}}`, `{"text":"mcpchaos-s2-00ff00"}`},
		{"optional ref", `{"$defs":{"T":{"type":"string"}},"properties":{"t":{"$ref":"#/$defs/T"}}}`, `{"t":"mcpchaos-s2-00ff00"}`},
		{"nested", `{"required":["o"],"properties":{"o":{"type":"object","required":["s"],"properties":{"s":{"type":"string"}}}}}`, `{"o":{"s":"mcpchaos-s2-00ff00"}}`},
		{"constrained strings keep their values", `{"required":["e","f","p"],"properties":{
			"e":{"type":"string","enum":["red"]},
			"f":{"type":"string","format":"uri"},
			"p":{"type":"string","pattern":"^[a-z]+$"},
			"o":{"type":"string","enum":["x"]}}}`, `{"e":"red","f":"file:///tmp/mcpchaos","p":"mcpchaos"}`},
		{"maxLength cuts it", `{"required":["a"],"properties":{"a":{"type":"string","maxLength":4}}}`, `{"a":"mcpc"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(MarkedArguments(json.RawMessage(tt.schema), m))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MarkedArguments (-want +got):\n%s", diff)
			}
			if unmarked := string(Arguments(json.RawMessage(tt.schema))); unmarked != string(MarkedArguments(json.RawMessage(tt.schema), "")) {
				t.Errorf("MarkedArguments with no marker = %s, want Arguments' %s", MarkedArguments(json.RawMessage(tt.schema), ""), unmarked)
			}
		})
	}
}
