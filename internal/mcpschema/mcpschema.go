package mcpschema

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed schemas
var schemaFS embed.FS

// Revision is the vendored official schema of one MCP revision. Its
// methods are safe for concurrent use; the schema is compiled on first use.
type Revision struct {
	name string

	once sync.Once
	err  error // why the schema did not load; every check reports it
	checks
}

// checks are a revision's compiled schemas, by method.
type checks struct {
	requests      map[string]*jsonschema.Schema
	notifications map[string]*jsonschema.Schema
	results       map[string]*jsonschema.Schema
	resultDefs    map[string][]string // request method → the definitions its result may match
	errorResponse *jsonschema.Schema
}

// revisions are the vendored revisions, oldest first (their directory
// names are dates, so they sort by name; draft sorts after every date).
var revisions = func() []*Revision {
	entries, _ := fs.ReadDir(schemaFS, "schemas")
	var rr []*Revision
	for _, e := range entries {
		if e.IsDir() {
			rr = append(rr, &Revision{name: e.Name()})
		}
	}
	return rr
}()

// Revisions names the vendored revisions, oldest first.
func Revisions() []string {
	names := make([]string, len(revisions))
	for i, r := range revisions {
		names[i] = r.name
	}
	return names
}

// For returns the vendored schema of protocolVersion, and true. For a
// version with no schema of its own it returns the newest revision not newer
// than it, or the oldest for a version older than all of them, and false:
// versions are dates, and a revision's schema is the best guess for the
// versions up to the next one.
func For(protocolVersion string) (*Revision, bool) {
	i := sort.Search(len(revisions), func(i int) bool { return revisions[i].name > protocolVersion })
	if i == 0 {
		return revisions[0], false
	}
	r := revisions[i-1]
	return r, r.name == protocolVersion
}

// Name is the revision, e.g. "2025-11-25".
func (r *Revision) Name() string { return r.name }

// Known reports whether the revision defines method, as a request or a
// notification. The checks return no problems for a method it does not
// define.
func (r *Revision) Known(method string) bool {
	r.load()
	return r.requests[method] != nil || r.notifications[method] != nil
}

// Request checks raw, a whole JSON-RPC request message, as a request of
// method.
func (r *Revision) Request(method string, raw []byte) []Problem {
	r.load()
	return r.check(r.requests, method, raw)
}

// Notification checks raw, a whole JSON-RPC notification message, as a
// notification of method.
func (r *Revision) Notification(method string, raw []byte) []Problem {
	r.load()
	return r.check(r.notifications, method, raw)
}

// Result checks raw, a whole JSON-RPC success response, as the answer to a
// request of method.
func (r *Revision) Result(method string, raw []byte) []Problem {
	r.load()
	return r.check(r.results, method, raw)
}

// Error checks raw, a whole JSON-RPC error response.
func (r *Revision) Error(raw []byte) []Problem {
	r.load()
	if r.err != nil {
		return []Problem{{Keyword: "schema", Message: r.err.Error()}}
	}
	return validate(r.errorResponse, raw)
}

// check runs the schema of method in by, which must be read after r.load.
func (r *Revision) check(by map[string]*jsonschema.Schema, method string, raw []byte) []Problem {
	if r.err != nil {
		return []Problem{{Keyword: "schema", Message: r.err.Error()}}
	}
	s := by[method]
	if s == nil {
		return nil
	}
	return validate(s, raw)
}

func (r *Revision) load() {
	r.once.Do(func() {
		c, err := compile(r.name)
		if err != nil {
			r.err = fmt.Errorf("the vendored MCP schema %s does not load: %w (run go test ./internal/mcpschema/)", r.name, err)
			return
		}
		r.checks = c
	})
}

// compile reads which definition checks which method out of the schema,
// and compiles one small schema per method and kind of message: the
// JSON-RPC envelope of the revision and the method's own definitions, so
// that a problem's pointer is into the whole message.
func compile(revision string) (checks, error) {
	var out checks
	file := "schemas/" + revision + "/schema.json"
	data, err := schemaFS.ReadFile(file)
	if err != nil {
		return out, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return out, fmt.Errorf("%s: %w", file, err)
	}
	root, _ := doc.(map[string]any)
	defsKey := "$defs"
	defs, ok := root[defsKey].(map[string]any)
	if !ok {
		defsKey = "definitions"
		if defs, ok = root[defsKey].(map[string]any); !ok {
			return out, fmt.Errorf("%s has neither $defs nor definitions", file)
		}
	}
	dialect, _ := root["$schema"].(string)

	base := "mcpschema:///" + revision + "/schema.json"
	c := newCompiler()
	if err := c.AddResource(base, doc); err != nil {
		return out, err
	}
	ref := func(def string) any {
		return map[string]any{"$ref": base + "#/" + defsKey + "/" + escapeToken(def)}
	}
	n := 0
	compileCheck := func(envelope string, alternatives []any) (*jsonschema.Schema, error) {
		n++
		u := "mcpschema:///" + revision + "/check/" + strconv.Itoa(n) + ".json"
		parts := []any{ref(envelope)}
		if len(alternatives) == 1 {
			parts = append(parts, alternatives[0])
		} else {
			parts = append(parts, map[string]any{"anyOf": alternatives})
		}
		check := map[string]any{"allOf": parts}
		if dialect != "" {
			check["$schema"] = dialect
		}
		if err := c.AddResource(u, check); err != nil {
			return nil, err
		}
		return c.Compile(u)
	}
	envelope := func(names ...string) (string, error) {
		for _, name := range names {
			if defs[name] != nil {
				return name, nil
			}
		}
		return "", fmt.Errorf("%s defines none of %s", file, strings.Join(names, ", "))
	}
	reqEnv, err := envelope("JSONRPCRequest")
	if err != nil {
		return out, err
	}
	notEnv, err := envelope("JSONRPCNotification")
	if err != nil {
		return out, err
	}
	resEnv, err := envelope("JSONRPCResultResponse", "JSONRPCResponse")
	if err != nil {
		return out, err
	}
	errEnv, err := envelope("JSONRPCErrorResponse", "JSONRPCError")
	if err != nil {
		return out, err
	}

	reqDefs, notDefs := methodDefinitions(defs)
	out.requests = map[string]*jsonschema.Schema{}
	out.notifications = map[string]*jsonschema.Schema{}
	out.results = map[string]*jsonschema.Schema{}
	out.resultDefs = map[string][]string{}
	for method, names := range reqDefs {
		var alts, results []any
		for _, name := range names {
			alts = append(alts, ref(name))
			for _, res := range resultDefinitions(defs, name) {
				if strings.HasSuffix(res, "Response") {
					results = append(results, completeIsFinal(defs, res, ref))
				} else {
					results = append(results, map[string]any{"properties": map[string]any{"result": ref(res)}})
				}
				out.resultDefs[method] = append(out.resultDefs[method], res)
			}
		}
		if out.requests[method], err = compileCheck(reqEnv, alts); err != nil {
			return out, fmt.Errorf("request %s: %w", method, err)
		}
		if out.results[method], err = compileCheck(resEnv, results); err != nil {
			return out, fmt.Errorf("result of %s: %w", method, err)
		}
	}
	for method, names := range notDefs {
		var alts []any
		for _, name := range names {
			alts = append(alts, ref(name))
		}
		if out.notifications[method], err = compileCheck(notEnv, alts); err != nil {
			return out, fmt.Errorf("notification %s: %w", method, err)
		}
	}
	if out.errorResponse, err = c.Compile(base + "#/" + defsKey + "/" + errEnv); err != nil {
		return out, fmt.Errorf("error response: %w", err)
	}
	return out, nil
}

// methodDefinitions maps each method to the definitions of its requests
// and of its notifications: those whose method property is a constant,
// named XRequest or XNotification. A definition identical to one already
// taken (2026-07-28's ClientNotification repeats CancelledNotification) is
// left out, so its problems are not reported twice.
func methodDefinitions(defs map[string]any) (requests, notifications map[string][]string) {
	requests, notifications = map[string][]string{}, map[string][]string{}
	names := make([]string, 0, len(defs))
	for name := range defs {
		names = append(names, name)
	}
	sort.Strings(names)
	add := func(by map[string][]string, method, name string) {
		for _, other := range by[method] {
			if reflect.DeepEqual(defs[other], defs[name]) {
				return
			}
		}
		by[method] = append(by[method], name)
	}
	for _, name := range names {
		def, _ := defs[name].(map[string]any)
		props, _ := def["properties"].(map[string]any)
		m, _ := props["method"].(map[string]any)
		method, _ := m["const"].(string)
		switch {
		case method == "":
		case strings.HasSuffix(name, "Request"):
			add(requests, method, name)
		case strings.HasSuffix(name, "Notification"):
			add(notifications, method, name)
		}
	}
	return requests, notifications
}

// resultDefinitions names the definitions a response to the request
// definition name may match, any one of them. XResultResponse (2026-07-28
// on) is a whole response message, with every result its request allows;
// otherwise XResult is the response's result member, or, for the requests
// a schema gives no result of their own (ping, logging/setLevel,
// resources/subscribe, resources/unsubscribe), EmptyResult. A request
// whose params take a task (2025-11-25's task-augmented requests) may
// also be answered by CreateTaskResult.
func resultDefinitions(defs map[string]any, name string) []string {
	stem := strings.TrimSuffix(name, "Request")
	var out []string
	switch {
	case defs[stem+"ResultResponse"] != nil:
		out = append(out, stem+"ResultResponse")
	case defs[stem+"Result"] != nil:
		out = append(out, stem+"Result")
	case defs["EmptyResult"] != nil:
		out = append(out, "EmptyResult")
	default:
		out = append(out, "Result")
	}
	def, _ := defs[name].(map[string]any)
	props, _ := def["properties"].(map[string]any)
	if defs["CreateTaskResult"] != nil && takesTask(defs, props["params"], 0) {
		out = append(out, "CreateTaskResult")
	}
	return out
}

// completeIsFinal is the check of a whole response, res, the way its
// schema's ResultType documents it. 2026-07-28's XResultResponse lets the
// result be XResult or an InputRequiredResult, and an InputRequiredResult
// is any result with a resultType (its inputRequests and requestState are
// optional), so the union alone accepts any result at all. But a result
// whose resultType is "complete" "contains the final content": that one
// must be an XResult.
func completeIsFinal(defs map[string]any, res string, ref func(string) any) any {
	own := strings.TrimSuffix(res, "Response")
	if defs["InputRequiredResult"] == nil || defs[own] == nil {
		return ref(res)
	}
	complete := map[string]any{
		"required": []any{"result"},
		"properties": map[string]any{"result": map[string]any{
			"required":   []any{"resultType"},
			"properties": map[string]any{"resultType": map[string]any{"const": "complete"}},
		}},
	}
	return map[string]any{"allOf": []any{
		ref(res),
		map[string]any{"if": complete, "then": map[string]any{"properties": map[string]any{"result": ref(own)}}},
	}}
}

// takesTask reports whether schema, a request's params, has a task
// property, following local $refs and the branches of anyOf and oneOf.
func takesTask(defs map[string]any, schema any, depth int) bool {
	s, _ := schema.(map[string]any)
	if s == nil || depth > 8 {
		return false
	}
	if props, _ := s["properties"].(map[string]any); props["task"] != nil {
		return true
	}
	if ref, _ := s["$ref"].(string); ref != "" {
		i := strings.LastIndexByte(ref, '/')
		if takesTask(defs, defs[ref[i+1:]], depth+1) {
			return true
		}
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		branches, _ := s[kw].([]any)
		for _, b := range branches {
			if takesTask(defs, b, depth+1) {
				return true
			}
		}
	}
	return false
}

// escapeToken escapes a JSON pointer token (RFC 6901).
func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
