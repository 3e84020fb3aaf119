//go:build unix

package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/judge"
)

// Every corrupt mode, and a duplicated call, against the real mcp-go server:
// the frame the fault wrote costs the client that call (an mcp-go client
// waits for an answer it will never get, so the test gives up on it), the
// server answers a broken line with a parse error or ignores it and keeps
// serving the next call, and the judge finds nothing wrong with the server:
// what it did with frames the client never sent that way is right.
func TestCorruptAndDuplicateCallsWithRealMCPServer(t *testing.T) {
	for _, tc := range []struct {
		spec string
		// lost says the corrupted call cannot be answered under its id.
		lost bool
	}{
		{"corrupt:on=c2s:request:tools/call,mode=json", true},
		{"corrupt:on=c2s:request:tools/call,mode=truncate", true},
		{"corrupt:on=c2s:request:tools/call,mode=newline", true},
		{"corrupt:on=c2s:request:tools/call,mode=text", true},
		{"corrupt:on=c2s:request:tools/call,mode=version", false},
		{"duplicate:on=c2s:request:tools/call", false},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			s := startMCP(t, tc.spec)
			s.initialize(t)
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			_, err := s.call(ctx, "echo", map[string]any{"text": "first"}, "")
			cancel()
			if tc.lost && err == nil {
				t.Error("the corrupted call was answered")
			}
			// A truncated frame is read glued to the next one: the client's
			// cancellation of the call it gave up on, or its next call,
			// whichever goes first. Spend that frame; the call after it
			// must be answered.
			if tc.spec == "corrupt:on=c2s:request:tools/call,mode=truncate" {
				ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
				_, _ = s.call(ctx, "echo", map[string]any{"text": "maybe glued"}, "")
				cancel()
			}
			ctx, cancel = context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if _, err := s.call(ctx, "echo", map[string]any{"text": "next"}, ""); err != nil {
				t.Fatalf("the server stopped serving after the fault: %v", err)
			}
			s.end(t)
			v := judge.Session(s.Rec.Events())
			if len(v.Findings) > 0 || len(v.Indeterminate) > 0 {
				t.Errorf("judge: %s; indeterminate %q; want a clean session", findingKinds(v), v.Indeterminate)
			}
		})
	}
}
