package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.RunServerIfAsked(main)
	os.Exit(m.Run())
}

func TestPlainSessionIsClean(t *testing.T) { mcptest.PlainSessions(t) }

// TestStalledReader is stall-s2c done by hand: the client stops reading while
// the server writes a 1 MiB answer, and reads again a second later.
func TestStalledReader(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false)

			p.PauseReading()
			call := p.CallTool("dump", map[string]any{}, "")
			time.Sleep(time.Second) // the write blocks on the full pipe: longer than 300ms
			p.ResumeReading()

			// Everything written before the ping's answer is in when it comes;
			// the buggy server's retry is done by then (it holds the writer).
			p.Result(p.Request("ping", nil))
			got := len(p.Responses(call))
			want := 1
			if !v.Fixed {
				want = 2
			}
			if got != want {
				t.Errorf("the dump call was answered %d times, want %d", got, want)
			}
			p.CloseStdin()
			if code, ok := p.Exit(mcptest.Wait); !ok || code != 0 {
				t.Errorf("after stdin closed: exit status %d, exited %v; want 0, true", code, ok)
			}
			if retried := strings.Contains(p.Stderr(), "retrying"); retried != !v.Fixed {
				t.Errorf("stderr mentions a retry: %v, want %v", retried, !v.Fixed)
			}
		})
	}
}
