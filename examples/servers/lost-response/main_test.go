package main

import (
	"os"
	"testing"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.RunServerIfAsked(main)
	os.Exit(m.Run())
}

func TestPlainSessionIsClean(t *testing.T) { mcptest.PlainSessions(t) }

// TestEOFWithCallsInFlight is eof-inflight done by hand: stdin closes while
// three slow calls run. Both twins exit 0; only the fixed one answers first.
func TestEOFWithCallsInFlight(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false)
			var calls []string
			for range 3 {
				calls = append(calls, p.CallTool("slow", map[string]any{"ms": 500}, ""))
			}
			// The ping's answer shows the server has read the three calls.
			p.Result(p.Request("ping", nil))
			p.CloseStdin()

			code, ok := p.Exit(mcptest.Wait)
			if !ok || code != 0 {
				t.Fatalf("after stdin closed: exit status %d, exited %v; want 0, true", code, ok)
			}
			answered := 0
			for _, id := range calls {
				answered += len(p.Responses(id))
			}
			want := 0
			if v.Fixed {
				want = 3
			}
			if answered != want {
				t.Errorf("%d of the 3 calls in flight were answered, want %d", answered, want)
			}
		})
	}
}
