package mcpschema

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestToolSchemaValidate(t *testing.T) {
	const weather = `{"type":"object","properties":{"location":{"type":"string"},"days":{"type":"integer","minimum":1}},"required":["location"],"additionalProperties":false}`
	const draft7 = `"$schema":"http://json-schema.org/draft-07/schema#",`
	for _, tc := range []struct {
		name, schema, instance string
		want                   []Problem
	}{
		{"arguments that fit", weather, `{"location":"Paris","days":3}`, nil},
		{"a missing argument", weather, `{"days":3}`,
			[]Problem{{"", "required", "missing property 'location'"}}},
		{"an argument of the wrong type, and one too many", weather, `{"location":"Paris","days":"3","hours":2}`,
			[]Problem{{"/days", "type", "got string, want integer"}, {"", "additionalProperties", "additional properties 'hours' not allowed"}}},
		{"a fraction is no integer", weather, `{"location":"Paris","days":1.5}`,
			[]Problem{{"/days", "type", "got number, want integer"}}},
		{"1.0 is an integer", weather, `{"location":"Paris","days":1.0}`, nil},
		{"an integer past 2^53, exactly", `{"type":"integer","maximum":9007199254740993}`, `9007199254740994`,
			[]Problem{{"", "maximum", "maximum: got 9007199254740994, want 9007199254740993"}}},
		{"an integer past 2^53 at its maximum", `{"type":"integer","maximum":9007199254740993}`, `9007199254740993`, nil},
		{"a fraction judged exactly", `{"type":"number","multipleOf":0.01}`, `19.99`, nil},
		{"a fraction judged exactly, failing", `{"type":"number","multipleOf":0.01}`, `19.999`,
			[]Problem{{"", "multipleOf", "multipleOf: got 19.999, want 0.01"}}},
		{"2020-12 applies the siblings of $ref", `{"$defs":{"a":{}},"$ref":"#/$defs/a","type":"string"}`, `1`,
			[]Problem{{"", "type", "got number, want string"}}},
		{"draft-07 ignores the siblings of $ref", `{` + draft7 + `"definitions":{"a":{}},"$ref":"#/definitions/a","type":"string"}`, `1`, nil},
		{"draft-07 honours dependencies", `{` + draft7 + `"dependencies":{"a":["b"]}}`, `{"a":1}`,
			[]Problem{{"", "dependencies", "properties 'b' required, if 'a' exists"}}},
		{"draft-07 tuples", `{` + draft7 + `"items":[{"type":"string"}],"additionalItems":false}`, `["a",1]`,
			[]Problem{{"", "additionalItems", "last 1 additionalItem(s) not allowed"}}},
		{"2020-12 tuples", `{"prefixItems":[{"type":"string"}],"items":false}`, `["a"]`, nil},
		{"format is not asserted", `{"type":"string","format":"email"}`, `"not an address"`, nil},
		{"nor under draft-07", `{` + draft7 + `"type":"string","format":"uri"}`, `"not a uri"`, nil},
		{"a local $ref", `{"$defs":{"pos":{"type":"integer","minimum":0}},"type":"object","properties":{"n":{"$ref":"#/$defs/pos"}}}`, `{"n":-1}`,
			[]Problem{{"/n", "minimum", "minimum: got -1, want 0"}}},
		{"instance not JSON", weather, `{"location":`,
			[]Problem{{"", "json", "not JSON: unexpected EOF"}}},
	} {
		s, err := CompileToolSchema(json.RawMessage(tc.schema))
		if err != nil {
			t.Errorf("%s: CompileToolSchema: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, s.Validate(json.RawMessage(tc.instance))); diff != "" {
			t.Errorf("%s: %s against %s (-want +got):\n%s", tc.name, tc.instance, tc.schema, diff)
		}
	}
}

// TestCompileToolSchemaRefusesWhatItCannotCompile: a server under test
// points the tool at whatever it likes; nothing is fetched, and the error
// says what to do instead.
func TestCompileToolSchemaRefusesWhatItCannotCompile(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         []string // substrings of the error
	}{
		{"a remote $ref", `{"type":"object","properties":{"x":{"$ref":"https://example.com/schemas/x.json"}}}`,
			[]string{"https://example.com/schemas/x.json", "not fetched", "#/$defs/NAME"}},
		{"a plain-http $ref", `{"$ref":"http://10.255.255.1/slow.json"}`,
			[]string{"http://10.255.255.1/slow.json", "not fetched"}},
		{"a file $ref", `{"$ref":"file:///etc/passwd"}`, []string{"file:///etc/passwd", "not fetched"}},
		{"a relative $ref", `{"$ref":"other.json#/$defs/x"}`, []string{"other.json", "not fetched"}},
		{"an unknown $schema", `{"$schema":"https://example.com/my-meta","type":"object"}`, []string{"https://example.com/my-meta"}},
		{"a $ref to nowhere", `{"$ref":"#/$defs/missing"}`, []string{"#/$defs/missing"}},
		{"a schema its meta-schema rejects", `{"type":"objekt"}`, []string{"does not compile", "meta-schema rejects it: /type: value must be one of 'array', 'boolean'"}},
		{"a draft-07 schema its meta-schema rejects", `{"$schema":"http://json-schema.org/draft-07/schema#","required":"name"}`, []string{"/required: got string, want array"}},
		{"draft-07 tuples under 2020-12", `{"items":[{"type":"string"}]}`, []string{"/items: got array, want boolean or object"}},
		{"a bad pattern", `{"type":"string","pattern":"(unclosed"}`, []string{"/pattern: '(unclosed' is not valid regex"}},
		{"an ECMA-262 lookahead, which Go's regexp lacks", `{"type":"string","pattern":"^(?=x)"}`, []string{"/pattern", "invalid or unsupported Perl syntax"}},
		{"not JSON", `{"type":`, []string{"not JSON"}},
		{"nothing", ``, []string{"not JSON"}},
	} {
		start := time.Now()
		s, err := CompileToolSchema(json.RawMessage(tc.schema))
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: took %v; nothing should be waited for", tc.name, took)
		}
		if err == nil {
			t.Errorf("%s: compiled %s; want an error", tc.name, tc.schema)
			_ = s
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}
}
