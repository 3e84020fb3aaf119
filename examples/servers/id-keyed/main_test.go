//go:build unix

package main

import (
	"fmt"
	"os"
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

// TestTwoCallsUnderOneID is id-collision done by hand: a slow call and an
// echo call under one id. The buggy twin drops the echo and answers once;
// the fixed one answers both, the echo first.
func TestTwoCallsUnderOneID(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false)
			p.Send(`{"jsonrpc":"2.0","id":"same","method":"tools/call","params":{"name":"slow","arguments":{"ms":200}}}`)
			p.Send(`{"jsonrpc":"2.0","id":"same","method":"tools/call","params":{"name":"echo","arguments":{"text":"second"}}}`)
			// The slow call takes 200ms: a second later every answer the
			// server will write is written.
			p.WaitFor(time.Second, func(msgs []mcptest.Msg, eof bool) bool {
				n := 0
				for _, m := range msgs {
					if m.IsResponse() && string(m.ID) == `"same"` {
						n++
					}
				}
				return n == 2 || eof
			})
			var texts []string
			for _, m := range p.Responses(`"same"`) {
				texts = append(texts, string(m.Result))
			}
			want := 1
			if v.Fixed {
				want = 2
			}
			if len(texts) != want {
				t.Errorf("%d answers to the two calls under id \"same\", want %d: %s", len(texts), want, strings.Join(texts, "\n"))
			}
			if !v.Fixed && !p.WaitStderr("retransmission of the one running: ignored", mcptest.Wait) {
				t.Errorf("no log line about the dropped request; stderr:\n%s", p.Stderr())
			}
		})
	}
}

// TestUnderIDCollision runs the server under mcpchaos's relay with the
// id-collision fault and judges the transcript as mcpchaos test does: the
// buggy twin leaves the colliding call unanswered past the deadline while
// it answers the other (unanswered-reused-id, a warning: the client reused
// the id first), the fixed twin owes and writes two answers (clean).
func TestUnderIDCollision(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			events, answers := relayCollision(t, v.Args...)
			var got []string
			for _, f := range judge.Session(events).Findings {
				got = append(got, fmt.Sprintf("%s %s %s %s", f.Severity, f.Kind, f.Request.Method, f.Request.ID))
			}
			// The client's calls are 2 (slow) and 3 (echo); 3 goes on as 2.
			var want []string
			wantAnswers := []string{"2"}
			if v.Fixed {
				// The echo is answered first, so the slow call gets its
				// result, and the echo call the slow one's.
				wantAnswers = []string{"2", "3"}
			} else {
				want = []string{"warning hang tools/call 2"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantAnswers, answers); diff != "" {
				t.Errorf("ids of the tools/call answers the client got (-want +got):\n%s", diff)
			}
		})
	}
}

// relayCollision plays a client through the relay: a slow call (id 2) and,
// once the relay has it, an echo call (id 3), which the fault sends on as 2.
// It waits past the deadline, ends the session and returns the transcript
// and the ids of the tools/call answers it got.
func relayCollision(t *testing.T, args ...string) ([]wire.Event, []string) {
	const deadline = 300 * time.Millisecond
	r := mcptest.StartRelay(t, []string{"id-collision"}, deadline, args...)
	r.Open()
	r.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":100}}}`)
	r.AwaitForwarded("2")
	r.Send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	answers := []string{wire.Classify([]byte(r.Next())).ID}
	// Past the deadline, the other answer has come or never will.
	time.Sleep(2 * deadline)
	for _, l := range r.Waiting() {
		answers = append(answers, wire.Classify([]byte(l)).ID)
	}
	return r.End(), answers
}
