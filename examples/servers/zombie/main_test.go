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

func TestPlainSessionIsClean(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			// A client preferring the stateless era is sent to initialize, and
			// answers the roots tool's roots/list.
			if era := mcptest.PlainSession(t, true, v.Args...); era != mcptest.Stateful {
				t.Errorf("session era = %s, want stateful", era)
			}
		})
	}
}

// TestEOFWhileServerRequestPending is eof-server-request done by hand: stdin
// closes right after the server sends roots/list, unanswered.
func TestEOFWhileServerRequestPending(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.AnswerServerRequests = false
			p.Open(false)
			call := p.CallTool("roots", map[string]any{}, "")
			sent := p.WaitFor(mcptest.Wait, func(msgs []mcptest.Msg, _ bool) bool {
				for _, m := range msgs {
					if m.IsRequest() && m.Method == "roots/list" {
						return true
					}
				}
				return false
			})
			if !sent {
				t.Fatalf("the server sent no roots/list within %v", mcptest.Wait)
			}
			p.CloseStdin()

			// mcpchaos's default grace is 3s; two already make the point.
			code, exited := p.Exit(2 * time.Second)
			if !v.Fixed {
				if exited {
					t.Errorf("the buggy server exited (status %d) after stdin closed; want it stuck", code)
				}
				return // the cleanup kills it
			}
			if !exited || code != 0 {
				t.Fatalf("after stdin closed: exit status %d, exited %v; want 0, true", code, exited)
			}
			r := p.Responses(call)
			if len(r) != 1 || !strings.Contains(string(r[0].Result), `"isError":true`) {
				t.Errorf("the roots call was answered with %v, want one tool error", r)
			}
		})
	}
}
