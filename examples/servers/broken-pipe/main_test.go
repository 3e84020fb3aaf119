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

// TestWritesAfterTheClientStoppedReading is half-close-s2c done by hand: the
// client closes its end of the server's stdout during a call, then closes
// the server's stdin.
func TestWritesAfterTheClientStoppedReading(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false)
			p.CallTool("slow", map[string]any{"ms": 100}, "tok")
			p.CloseOutput()
			// The call's progress and answer are written after the close.
			p.WaitStderr("broken pipe", mcptest.Wait)
			p.CloseStdin()

			code, ok := p.Exit(mcptest.Wait)
			if !ok {
				t.Fatalf("the server did not exit within %v of stdin closing", mcptest.Wait)
			}
			panicked := strings.Contains(p.Stderr(), "panic: write /dev/stdout: broken pipe")
			if v.Fixed {
				if code != 0 || panicked || !strings.Contains(p.Stderr(), "writing to the client") {
					t.Errorf("exit status %d, panicked %v; want 0, false, and the broken pipe logged; stderr:\n%s", code, panicked, p.Stderr())
				}
				return
			}
			if code != 2 || !panicked {
				t.Errorf("exit status %d, panicked %v; want 2, true; stderr:\n%s", code, panicked, p.Stderr())
			}
		})
	}
}
