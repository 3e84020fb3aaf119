package main

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.RunServerIfAsked(main)
	os.Exit(m.Run())
}

func TestPlainSessionIsClean(t *testing.T) { mcptest.PlainSessions(t) }

// TestEOFWithCallsInFlight is eof-inflight done by hand: stdin closes while
// three slow calls run.
func TestEOFWithCallsInFlight(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false)
			var calls []string
			for range 3 {
				calls = append(calls, p.CallTool("slow", map[string]any{"ms": 300}, "tok"))
			}
			// The ping's answer shows the server has read the three calls.
			p.Result(p.Request("ping", nil))
			p.CloseStdin()

			code, ok := p.Exit(mcptest.Wait)
			if !ok {
				t.Fatalf("the server did not exit within %v of stdin closing", mcptest.Wait)
			}
			panicked := strings.Contains(p.Stderr(), "panic: send on closed channel")
			if v.Fixed {
				if code != 0 || panicked {
					t.Errorf("exit status %d, panicked %v; want 0, false; stderr:\n%s", code, panicked, p.Stderr())
				}
				for _, id := range calls {
					if n := len(p.Responses(id)); n != 1 {
						t.Errorf("call %s answered %d times, want once", id, n)
					}
				}
				return
			}
			if code != 2 || !panicked {
				t.Errorf("exit status %d, panicked %v; want 2, true; stderr:\n%s", code, panicked, p.Stderr())
			}
		})
	}
}
