//go:build unix

package main

import (
	"fmt"
	"os"
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

// TestStringIDs is id-type done by hand: string ids, digits or not. The
// buggy twin answers "7" as 7; both keep "seven".
func TestStringIDs(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false)
			p.Send(`{"jsonrpc":"2.0","id":"7","method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`)
			p.Send(`{"jsonrpc":"2.0","id":"seven","method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}`)
			p.WaitFor(mcptest.Wait, func(msgs []mcptest.Msg, eof bool) bool {
				n := 0
				for _, m := range msgs {
					if m.IsResponse() && string(m.ID) != "1" {
						n++
					}
				}
				return n == 2 || eof
			})
			want := map[string]int{`"7"`: 1, `"seven"`: 1}
			if !v.Fixed {
				want = map[string]int{"7": 1, `"seven"`: 1}
			}
			got := map[string]int{}
			for _, id := range []string{`"7"`, "7", `"seven"`} {
				if n := len(p.Responses(id)); n > 0 {
					got[id] = n
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answers by id (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnderIDType runs the server behind mcpchaos's relay with the id-type
// fault and judges the transcript: the buggy twin answers the call it got as
// "2" with id 2, an answer to nothing it was asked, and the call stays
// unanswered past the deadline; the relay forwards that answer untranslated
// (the client, which sent 2, happens to accept it). The fixed twin answers
// "2", which goes back to the client as 2: clean.
func TestUnderIDType(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			const deadline = 300 * time.Millisecond
			r := mcptest.StartRelay(t, []string{"id-type"}, deadline, v.Args...)
			r.Open()
			r.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
			answer := wire.Classify([]byte(r.Next()))
			time.Sleep(2 * deadline)
			events := r.End()

			if answer.ID != "2" {
				t.Errorf("the client got an answer with id %s, want 2", answer.ID)
			}
			var got []string
			for _, f := range judge.Session(events).Findings {
				got = append(got, fmt.Sprintf("%s %s %s %s", f.Severity, f.Kind, f.Request.Method, f.Request.ID))
			}
			var want []string
			if !v.Fixed {
				want = []string{`error hang tools/call "2"`, "error unknown-response  2"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			// What the server wrote, and what the client got from it.
			var server []string
			for _, e := range events {
				if e.Dir == "s2c" && e.Kind == "response" && (e.Type == wire.EventReceived || e.Type == wire.EventForwarded) && e.ID != "0" {
					server = append(server, e.Type+" "+e.ID)
				}
			}
			wantServer := []string{`received "2"`, "forwarded 2"}
			if !v.Fixed {
				wantServer = []string{"received 2"} // forwarded as it came: its event carries no bytes
			}
			if diff := cmp.Diff(wantServer, server); diff != "" {
				t.Errorf("the tools/call answer (-want +got):\n%s", diff)
			}
		})
	}
}
