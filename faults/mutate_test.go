package faults

import (
	"strings"
	"testing"
)

func TestMutate(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","n":2,"tags":["a"],"on":true}}}` + "\n"
	for _, tc := range []struct {
		spec, want string
		skipped    bool
	}{
		{spec: "mutate", want: `{"id":4,"jsonrpc":"2.0","method":"tools/call","params":null}`},
		{spec: "mutate:field=/params/arguments,op=drop", want: `{"id":4,"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`},
		{spec: "mutate:field=/params/arguments/text,op=retype", want: `"text":7`},
		{spec: "mutate:field=/params/arguments/n,op=retype", want: `"n":"2"`},
		{spec: "mutate:field=/params/arguments/on,op=retype", want: `"on":"true"`},
		{spec: "mutate:field=/params/arguments,op=retype", want: `"arguments":[]`},
		{spec: "mutate:field=/params/arguments/tags,op=retype", want: `"tags":{}`},
		{spec: "mutate:field=/params/arguments/tags/0,op=drop", want: `"tags":[]`},
		{spec: "mutate:field=/params/arguments/n,op=lengthen", want: `"n":1e308`},
		{spec: "mutate:field=/params/arguments/text,op=lengthen,size=10", want: `"text":"himmmmmmmm"`},
		{spec: "mutate:field=/params/arguments/tags,op=lengthen,size=8", want: `"tags":["a","a","a"]`},
		{spec: "mutate:field=/params/arguments/on,op=lengthen", skipped: true},
		{spec: "mutate:field=/params/nope", skipped: true},
		{spec: "mutate:field=/params/arguments/tags/7", skipped: true},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			ds := runPlan(t, 1, []string{tc.spec}, []frame{{c2s, call}})
			if len(ds) != 1 {
				t.Fatalf("%d decisions, want 1", len(ds))
			}
			e := ds[0].Effect
			if e.Skipped != tc.skipped {
				t.Fatalf("skipped %v (%s), want %v", e.Skipped, e.Detail, tc.skipped)
			}
			if tc.skipped {
				return
			}
			got := string(e.Rewrite)
			if !strings.Contains(got, tc.want) || !strings.HasSuffix(got, "}\n") || !strings.Contains(got, `"id":4`) {
				t.Errorf("rewrite %q, want it to hold %s, the id 4, and the line ending", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"mutate:field=/id", "mutate:field=params", "mutate:field=/", "mutate:op=shuffle", "mutate:position=after"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = nil error, want one", bad)
		}
	}
}
