package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// mutate sends one message on with one of its fields changed, the ways a
// buggy SDK or a model writing arguments changes them: dropped, null, of
// another JSON type, or lengthened. The receiver owes a request so changed
// an answer all the same (an error, or a tool error for a tool's
// arguments), and must go on serving; one that crashes, hangs or drops it
// is what the search finds. Unlike the hostile workload, it acts at any
// moment of a session a trigger names, under the other faults of a plan.
var mutateFamily = &Family{
	Name: "mutate",
	Doc: "send the triggering message on with one field changed (field= a JSON pointer into the message, default /params): dropped, null, of another JSON type, or lengthened; " +
		"its id is kept, so a request so changed is owed an answer (default on=c2s:request:tools/call)",
	Phase: Before,
	On:    "c2s:request:tools/call",
	Params: []Param{
		{Name: "field", Type: TypeString, Default: "/params", Doc: "the field to change, as a JSON pointer (RFC 6901) into the message: /params, /params/arguments, /params/arguments/text, /params/uri; not /id, which the id faults change, nor the message itself"},
		{Name: "op", Type: TypeChoice, Default: "null", Choices: mutateOps,
			Doc: "drop removes the field; null sets it to null; retype gives it another JSON type (a string a number, a number a string, an object an array, an array an object, true a string); lengthen grows a string to size bytes, an array to size bytes of copies of its last item, a number to 1e308"},
		{Name: "size", Type: TypeSize, Default: "64KiB", Doc: "how long op=lengthen makes the field"},
	},
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		ptr, err := parsePointer(v.String("field"))
		if err != nil {
			return nil, err
		}
		if len(ptr) == 1 && (ptr[0] == "id" || ptr[0] == "jsonrpc") {
			return nil, fmt.Errorf("field: %s is not a field mutate changes (the id faults change ids; corrupt:mode=version the jsonrpc member)", v.String("field"))
		}
		size := v.Size("size")
		if size > maxMutateSize {
			return nil, fmt.Errorf("size: %d bytes is over the %d mutate builds", size, maxMutateSize)
		}
		return mutate{field: v.String("field"), ptr: ptr, op: v.String("op"), size: int(size)}, nil
	},
	Example: "mutate:on=c2s:request:resources/read,field=/params/uri,op=lengthen,size=1MiB",
}

var mutateOps = []string{"drop", "null", "retype", "lengthen"}

// maxMutateSize bounds op=lengthen, so that a typo cannot build gigabytes.
const maxMutateSize = 64 << 20

type mutate struct {
	field string
	ptr   []string
	op    string
	size  int
}

// parsePointer reads a JSON pointer (RFC 6901) of at least one token.
func parsePointer(s string) ([]string, error) {
	if !strings.HasPrefix(s, "/") || s == "/" {
		return nil, fmt.Errorf("field: %q is not a JSON pointer to a member of the message (it starts with /, as /params/arguments)", s)
	}
	toks := strings.Split(s[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

func (k mutate) Fire(c *FireContext) Effect {
	body, end := splitEnding(c.Message.Raw)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return Effect{Skipped: true, Detail: "skipped: the message is not JSON"}
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return Effect{Skipped: true, Detail: "skipped: the message is not a JSON object"}
	}
	// Walk to the field's parent.
	var parent any = obj
	for _, tok := range k.ptr[:len(k.ptr)-1] {
		next, ok := child(parent, tok)
		if !ok {
			return Effect{Skipped: true, Detail: "skipped: the message has no field " + k.field}
		}
		parent = next
	}
	last := k.ptr[len(k.ptr)-1]
	old, ok := child(parent, last)
	if !ok {
		return Effect{Skipped: true, Detail: "skipped: the message has no field " + k.field}
	}
	var what string
	switch k.op {
	case "drop":
		if m, isObj := parent.(map[string]any); isObj {
			delete(m, last)
		} else {
			a := parent.([]any)
			i, _ := strconv.Atoi(last)
			setChild(obj, k.ptr[:len(k.ptr)-1], append(a[:i:i], a[i+1:]...))
		}
		what = "without " + k.field
	case "null":
		setIn(parent, last, nil)
		what = "with " + k.field + " null"
	case "retype":
		nv, how := retyped(old)
		setIn(parent, last, nv)
		what = "with " + k.field + " " + how
	default: // lengthen
		nv, how, ok := lengthened(old, k.size)
		if !ok {
			return Effect{Skipped: true, Detail: fmt.Sprintf("skipped: %s is %s, which lengthen does not grow", k.field, jsonKind(old))}
		}
		setIn(parent, last, nv)
		what = "with " + k.field + " " + how
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return Effect{Skipped: true, Detail: "skipped: the changed message could not be written: " + err.Error()}
	}
	raw := bytes.TrimSuffix(out.Bytes(), []byte("\n"))
	return Effect{Rewrite: concatBytes(raw, end), Detail: fmt.Sprintf("send the message on %s (%d bytes for %d)", what, len(raw), len(body))}
}

func child(v any, tok string) (any, bool) {
	switch p := v.(type) {
	case map[string]any:
		c, ok := p[tok]
		return c, ok
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(p) || strconv.Itoa(i) != tok {
			return nil, false
		}
		return p[i], true
	}
	return nil, false
}

func setIn(parent any, tok string, v any) {
	switch p := parent.(type) {
	case map[string]any:
		p[tok] = v
	case []any:
		i, _ := strconv.Atoi(tok)
		p[i] = v
	}
}

// setChild sets the value at ptr under root (an array that lost an item
// is a new slice, which its own parent must hold).
func setChild(root map[string]any, ptr []string, v any) {
	var parent any = root
	for _, tok := range ptr[:len(ptr)-1] {
		parent, _ = child(parent, tok)
	}
	setIn(parent, ptr[len(ptr)-1], v)
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	}
	return "an object"
}

// retyped is v as another JSON type, and the words for it.
func retyped(v any) (any, string) {
	switch x := v.(type) {
	case string:
		return json.Number("7"), "a number (was a string)"
	case json.Number:
		return string(x), "a string (was a number)"
	case bool:
		return strconv.FormatBool(x), "a string (was a boolean)"
	case []any:
		return map[string]any{}, "an object (was an array)"
	case nil:
		return "null", "a string (was null)"
	}
	return []any{}, "an array (was an object)"
}

// lengthened is v grown to about size bytes, and the words for it.
func lengthened(v any, size int) (any, string, bool) {
	switch x := v.(type) {
	case string:
		if len(x) >= size {
			return nil, "", false
		}
		return x + strings.Repeat("m", size-len(x)), fmt.Sprintf("a string of %d bytes", size), true
	case json.Number:
		return json.Number("1e308"), "1e308", true
	case []any:
		if len(x) == 0 {
			return nil, "", false
		}
		item, _ := json.Marshal(x[len(x)-1])
		n := max(1, size/(len(item)+1))
		out := make([]any, 0, len(x)+n)
		out = append(out, x...)
		for range n {
			out = append(out, x[len(x)-1])
		}
		return out, fmt.Sprintf("an array of %d items", len(out)), true
	}
	return nil, "", false
}
