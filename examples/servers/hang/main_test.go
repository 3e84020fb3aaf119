package main

import (
	"os"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.RunServerIfAsked(main)
	os.Exit(m.Run())
}

func TestPlainSessionIsClean(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			// A client preferring the stateless era is sent to initialize.
			if era := mcptest.PlainSession(t, true, v.Args...); era != mcptest.Stateful {
				t.Errorf("session era = %s, want stateful", era)
			}
		})
	}
}

// TestNotificationBurstDuringCall is burst-c2s done by hand: 100
// notifications/roots/list_changed while a slow call runs, then a ping. The
// client answers every roots/list at once; the buggy server still never reads
// those answers, nor the ping.
func TestNotificationBurstDuringCall(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			// The buggy server gets two seconds, far more than the fixed one needs.
			wantHang, pingWithin := !v.Fixed, mcptest.Wait
			if wantHang {
				pingWithin = 2 * time.Second
			}
			p := mcptest.Start(t, v.Args...)
			p.Open(false)
			call := p.CallTool("slow", map[string]any{"ms": 300}, "tok")
			for range 100 {
				p.Notify("notifications/roots/list_changed", nil)
			}
			ping := p.Request("ping", nil)

			_, answered := p.Response(ping, pingWithin)
			if answered == wantHang {
				t.Fatalf("ping answered within %v: %v, want %v", pingWithin, answered, !wantHang)
			}
			// Either way the server is alive and its handlers still write: the
			// call that was running is answered.
			if _, ok := p.Response(call, mcptest.Wait); !ok {
				t.Errorf("the slow call was never answered")
			}
			if wantHang {
				if !p.Running() {
					t.Errorf("the server exited; a hang needs it alive")
				}
				return // the cleanup kills it: it would not notice stdin closing either
			}
			p.CloseStdin()
			if code, ok := p.Exit(mcptest.Wait); !ok || code != 0 {
				t.Errorf("after stdin closed: exit status %d, exited %v; want 0, true", code, ok)
			}
		})
	}
}
