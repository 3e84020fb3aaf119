//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/mcptest"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

func TestMain(m *testing.M) {
	mcptest.RunServerIfAsked(main)
	os.Exit(m.Run())
}

func TestPlainSessionIsClean(t *testing.T) { mcptest.PlainSessions(t) }

// TestNoRootsCapability: a client that declared no roots is not asked for
// them.
func TestNoRootsCapability(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Result(p.Request("initialize", map[string]any{
				"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "mcptest", "version": "1"},
			}))
			p.Notify("notifications/initialized", nil)
			r := p.Result(p.CallTool("roots", nil, ""))
			if got := fmt.Sprint(r["content"]); !strings.Contains(got, "not asked") {
				t.Errorf("roots call = %v, want it to say the client was not asked", r)
			}
			for _, m := range p.Messages() {
				if m.IsRequest() {
					t.Errorf("the server asked a client without roots: %s", m.Raw)
				}
			}
		})
	}
}

// TestSameAnswerTwice is the duplicated answer sent by hand: the roots call
// sends roots/list, the client answers it, the call returns, and the same
// answer arrives again, then a ping. The buggy twin panics on the second
// copy (exit 2) and never answers the ping; the fixed one logs it, answers
// the ping and exits 0 at EOF.
func TestSameAnswerTwice(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false) // declares roots
			p.AnswerServerRequests = false
			call := p.CallTool("roots", nil, "")
			var ask mcptest.Msg
			if !p.WaitFor(mcptest.Wait, func(msgs []mcptest.Msg, _ bool) bool {
				for _, m := range msgs {
					if m.IsRequest() && m.Method == "roots/list" {
						ask = m
						return true
					}
				}
				return false
			}) {
				t.Fatalf("no roots/list within %v; output:\n%v", mcptest.Wait, p.Messages())
			}
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":"file:///tmp/mcptest","name":"mcptest"}]}}`, ask.ID)
			p.Send(answer)
			if r := p.Result(call); !strings.Contains(fmt.Sprint(r["content"]), "file:///tmp/mcptest") {
				t.Errorf("roots call = %v, want the roots", r)
			}

			p.MayBeGone = !v.Fixed
			p.Send(answer)
			ping := p.Request("ping", nil)
			if !v.Fixed {
				code, ok := p.Exit(mcptest.Wait)
				if !ok || code != 2 {
					t.Fatalf("exit status %d, exited %v; want 2 (a panic), true", code, ok)
				}
				if want := fmt.Sprintf("panic: answer to request %s: no request pending under that id", ask.ID); !strings.Contains(p.Stderr(), want) {
					t.Errorf("stderr does not say %q:\n%s", want, p.Stderr())
				}
				if n := len(p.Responses(ping)); n != 0 {
					t.Errorf("the ping was answered %d times by a server that died before it", n)
				}
				return
			}

			p.Result(ping)
			if want := fmt.Sprintf("response to id %s, which we never asked or already forgot", ask.ID); !p.WaitStderr(want, mcptest.Wait) {
				t.Errorf("stderr does not say %q:\n%s", want, p.Stderr())
			}
			p.CloseStdin()
			if code, ok := p.Exit(mcptest.Wait); !ok || code != 0 {
				t.Errorf("after stdin closed: exit status %d, exited %v; want 0, true", code, ok)
			}
			p.ExpectClean()
		})
	}
}

// TestUnderDuplicateAnswer runs the server under mcpchaos's relay with the
// fault that exposes it, duplicate:on=c2s:response:roots/list, and judges
// the transcript as mcpchaos test does: the buggy twin crashes (go:panic),
// the fixed twin answers the roots call and is clean.
func TestUnderDuplicateAnswer(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			r := mcptest.StartRelay(t, []string{"duplicate:on=c2s:response:roots/list"}, 300*time.Millisecond, v.Args...)
			// mcptest's Relay.Open declares no capabilities: this client
			// declares roots, so the server asks for them.
			r.Send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"mcptest","version":"1"}}}`)
			r.Next()
			r.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			r.Send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
			ask := wire.Classify([]byte(r.Next()))
			if ask.Kind != wire.Request || ask.Method != "roots/list" {
				t.Fatalf("want roots/list from the server, got %+v", ask)
			}
			// Answered once; the relay sends the answer on twice.
			r.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[]}}`, ask.ID))
			if v.Fixed {
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				if line := r.Next(); json.Unmarshal([]byte(line), &m) != nil || string(m.ID) != "1" {
					t.Errorf("want the roots call's answer, got %s", line)
				}
			}
			var got []string
			for _, f := range judge.Session(r.End()).Findings {
				got = append(got, fmt.Sprintf("%s %s %s", f.Severity, f.Kind, f.Signature))
			}
			var want []string
			if !v.Fixed {
				want = []string{"error crash go:panic"}
				// The call's answer races the panic: written first, or
				// lost with the process (a warning when the session's end
				// closed stdin first).
				got = slices.DeleteFunc(got, func(s string) bool { return strings.HasSuffix(s, " lost-response ") })
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
