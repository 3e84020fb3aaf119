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

// TestLineItCannotTake is oversize-call and malformed-line done by hand: a
// slow call is running when the line arrives. The buggy twin exits 1 with the
// call unanswered; the fixed one answers the long call, or the bad line with
// a parse error, and a ping after it.
func TestLineItCannotTake(t *testing.T) {
	for _, tc := range []struct {
		name string
		// send sends the line and returns the id of the request it is
		// ("" for a line that is not JSON).
		send      func(p *mcptest.Proc) string
		buggyLogs string
	}{
		{"over 64 KiB", func(p *mcptest.Proc) string {
			// 70 KiB: past the scanner's limit. It is more than a pipe
			// holds (64 KiB), so the buggy twin may exit on it before
			// the write ends (MayBeGone).
			return p.Request("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"},
				"_meta": map[string]any{"io.mcpchaos/padding": strings.Repeat("p", 70<<10)}})
		}, "reading stdin: bufio.Scanner: token too long"},
		{"not JSON", func(p *mcptest.Proc) string {
			p.Send("this is not JSON")
			return ""
		}, "decoding a message from stdin: invalid character 'h' in literal true (expecting 'r')"},
	} {
		for _, v := range mcptest.Variants {
			t.Run(tc.name+"/"+v.Name, func(t *testing.T) {
				t.Parallel()
				p := mcptest.Start(t, v.Args...)
				p.Open(false)
				slow := p.CallTool("slow", map[string]any{"ms": 300}, "")
				p.MayBeGone = !v.Fixed
				line := tc.send(p)

				if !v.Fixed {
					// Nothing more is sent: the server may be gone already.
					code, ok := p.Exit(mcptest.Wait)
					if !ok || code != 1 {
						t.Fatalf("exit status %d, exited %v; want 1, true", code, ok)
					}
					if !strings.Contains(p.Stderr(), tc.buggyLogs) {
						t.Errorf("stderr does not say %q:\n%s", tc.buggyLogs, p.Stderr())
					}
					for _, id := range []string{slow, line} {
						if n := len(p.Responses(id)); id != "" && n != 0 {
							t.Errorf("request %s answered %d times by a server that exited on the line before it", id, n)
						}
					}
					return
				}

				p.Result(p.Request("ping", nil))
				p.Result(slow)
				if line != "" {
					p.Result(line)
				} else {
					parseErrors := 0
					for _, m := range p.Responses("null") {
						if m.Error != nil && m.Error.Code == -32700 {
							parseErrors++
						}
					}
					if parseErrors != 1 {
						t.Errorf("%d parse errors with id null, want 1; output:\n%v", parseErrors, p.Messages())
					}
				}
				p.CloseStdin()
				if code, ok := p.Exit(mcptest.Wait); !ok || code != 0 {
					t.Errorf("after stdin closed: exit status %d, exited %v; want 0, true", code, ok)
				}
			})
		}
	}
}
