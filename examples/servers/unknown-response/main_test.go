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

// TestNotificationBurst is burst-c2s done by hand: 100
// notifications/roots/list_changed during a slow call.
func TestNotificationBurst(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false)
			call := p.CallTool("slow", map[string]any{"ms": 100}, "tok")
			for range 100 {
				p.Notify("notifications/roots/list_changed", nil)
			}
			// The server answers notifications on its read loop, so all of its
			// answers are written before the ping's.
			p.Result(p.Request("ping", nil))
			p.Result(call)

			unsolicited := 0
			for _, m := range p.Messages() {
				if m.IsResponse() && string(m.ID) == "null" {
					unsolicited++
					if m.Error == nil || m.Error.Code != -32601 {
						t.Errorf("unexpected response with id null: %s", m.Raw)
					}
				}
			}
			want := 0
			if !v.Fixed {
				want = 100
			}
			if unsolicited != want {
				t.Errorf("%d responses with id null, want %d", unsolicited, want)
			}
		})
	}
}
