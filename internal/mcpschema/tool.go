package mcpschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ToolSchema is a tool's inputSchema or outputSchema, compiled. It is safe
// for concurrent use.
type ToolSchema struct {
	schema *jsonschema.Schema
}

// toolSchemaURL is where a tool schema sits for the compiler: a relative
// $ref resolves against it, to a URL the loader refuses.
const toolSchemaURL = "mcpschema:///tool/schema.json"

// CompileToolSchema compiles a tool's inputSchema or outputSchema as a
// server lists it. A schema without $schema is JSON Schema 2020-12, as
// MCP 2025-11-25 says; one that names draft 4, 6, 7 or 2019-09 is read as
// that draft. Nothing is fetched: a $ref (or $schema) to anything outside
// the schema fails here, and so does a schema its draft's meta-schema
// rejects, with an error saying why.
func CompileToolSchema(raw json.RawMessage) (*ToolSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("tool schema is not JSON: %w", err)
	}
	c := newCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(toolSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("tool schema: %w", err)
	}
	s, err := c.Compile(toolSchemaURL)
	var bad *jsonschema.SchemaValidationError
	var why *jsonschema.ValidationError
	if errors.As(err, &bad) && errors.As(bad.Err, &why) {
		var ps []string
		for _, p := range problems(why) {
			ps = append(ps, p.String())
		}
		return nil, fmt.Errorf("tool schema does not compile: its draft's meta-schema rejects it: %s", strings.Join(ps, "; "))
	}
	if err != nil {
		return nil, fmt.Errorf("tool schema does not compile: %w", err)
	}
	return &ToolSchema{schema: s}, nil
}

// Validate checks instance (a tools/call's arguments, or a result's
// structuredContent) against the schema. Problems point into instance.
func (t *ToolSchema) Validate(instance json.RawMessage) []Problem {
	return validate(t.schema, instance)
}

// newCompiler is a compiler that reads nothing from the network or the
// disk, and asserts no format.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.UseLoader(offline{})
	// jsonschema asserts format under drafts before 2019-09 (MCP's older
	// schemas are draft-07); 2020-12 makes it an annotation, and a
	// relative uri a server sends is no protocol violation, so no draft
	// asserts it here. "regex" cannot be overridden, and stays checked.
	for _, name := range []string{
		"date", "date-time", "duration", "email", "hostname", "idn-email", "idn-hostname",
		"ipv4", "ipv6", "iri", "iri-reference", "json-pointer", "period",
		"relative-json-pointer", "semver", "time", "uri", "uri-reference", "uri-template", "uuid",
	} {
		c.RegisterFormat(&jsonschema.Format{Name: name, Validate: func(any) error { return nil }})
	}
	return c
}

// offline refuses every resource the compiler does not already hold (the
// JSON Schema meta-schemas are built in).
type offline struct{}

func (offline) Load(url string) (any, error) {
	return nil, fmt.Errorf("not fetched: schemas are read offline, with only the JSON Schema drafts' meta-schemas built in; a $ref must point inside the schema, as \"#/$defs/NAME\" does")
}
