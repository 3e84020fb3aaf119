package faults

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/wire"
)

// A notification injected toward a stateless server carries the client's
// _meta, or the server refuses it (-32602) before the moment the fault
// was for; one injected in the stateful era is left as it was.
func TestInjectionsTowardAStatelessServerCarryTheClientsMeta(t *testing.T) {
	const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name, call string
		want       string
	}{
		{"stateless", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":` + meta + `}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":` + meta + `,"reason":"mcpchaos fault cancel","requestId":1}}`},
		{"stateful", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"mcpchaos fault cancel","requestId":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("cancel")
			if err != nil {
				t.Fatal(err)
			}
			p := NewPlan(1, []*Fault{f})
			m := wire.Classify([]byte(tc.call))
			s := p.Receive(wire.ToServer, &m)
			var got []string
			for _, phase := range []Phase{Before, After} {
				for _, fi := range p.Decide(phase, s) {
					for _, inj := range fi.Effect.Inject {
						got = append(got, canonical(t, inj.Raw))
					}
				}
			}
			if diff := cmp.Diff([]string{canonical(t, []byte(tc.want))}, got); diff != "" {
				t.Errorf("injected (-want +got):\n%s", diff)
			}
		})
	}
}

// canonical re-encodes JSON with sorted keys, so that member order does
// not count.
func canonical(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
