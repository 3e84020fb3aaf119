package faults

import (
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/wire"
)

// BenchmarkPlanStep weighs one message against a plan, as the relay does
// for every frame of a direction the plan watches: Receive, then Decide
// before and after forwarding. The plan is scripts/bench-relay's, a
// trigger that matches every request and never acts, and a scenario's
// worth of faults that match, count and draw but never act.
func BenchmarkPlanStep(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":123456,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 120) + `"}}}` + "\n")
	m := wire.Classify(frame)
	for _, bc := range []struct {
		name  string
		specs []string
	}{
		{"bench-relay", []string{"drop:on=c2s:request:tools/call,nth=1000000000"}},
		{"six-faults", []string{
			"drop:on=c2s:request:tools/call,nth=1000000000",
			"delay:on=c2s:request:tools/*,p=0,for=1s",
			"duplicate:on=c2s:request:*/call,nth=1000000000",
			"corrupt:on=c2s:request,p=0",
			"fragment:on=c2s:request:tools/call,after=c2s:request:initialize",
			"drop:on=c2s:notification:notifications/*",
		}},
	} {
		for _, serial := range []bool{false, true} {
			name := bc.name
			if serial {
				// As the stdio relay decides: one goroutine a direction.
				name += "/serial"
			}
			b.Run(name, func(b *testing.B) {
				p := NewPlan(1, mustParse(b, bc.specs...))
				if serial {
					p.Serial()
				}
				var s Step
				b.ReportAllocs()
				for b.Loop() {
					p.ReceiveInto(&s, wire.ToServer, &m)
					if len(p.Decide(Before, &s)) > 0 || len(p.Decide(After, &s)) > 0 {
						b.Fatal("a fault fired")
					}
				}
			})
		}
	}
}
