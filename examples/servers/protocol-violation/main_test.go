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

// TestNotificationBurst is burst-c2s done by hand: 100
// notifications/roots/list_changed during a slow call.
func TestNotificationBurst(t *testing.T) {
	const warning = "warning: notification backlog 11\n"
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false)
			call := p.CallTool("slow", map[string]any{"ms": 100}, "tok")
			for range 100 {
				p.Notify("notifications/roots/list_changed", nil)
			}
			// The warning is printed on the read loop, before the ping is read.
			p.Result(p.Request("ping", nil))
			p.Result(call)
			p.CloseStdin()
			if code, ok := p.Exit(mcptest.Wait); !ok || code != 0 {
				t.Errorf("after stdin closed: exit status %d, exited %v; want 0, true", code, ok)
			}

			var notJSON []string
			for _, m := range p.Messages() {
				if !m.JSON {
					notJSON = append(notJSON, m.Raw)
				}
			}
			onStderr := strings.Contains(p.Stderr(), warning)
			if v.Fixed {
				if len(notJSON) != 0 || !onStderr {
					t.Errorf("stdout lines that are not JSON: %q, warning on stderr: %v; want none, true", notJSON, onStderr)
				}
				return
			}
			if len(notJSON) != 1 || notJSON[0] != warning || onStderr {
				t.Errorf("stdout lines that are not JSON: %q, warning on stderr: %v; want [%q], false", notJSON, onStderr, warning)
			}
		})
	}
}
