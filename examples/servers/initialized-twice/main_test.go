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
)

func TestMain(m *testing.M) {
	mcptest.RunServerIfAsked(main)
	os.Exit(m.Run())
}

func TestPlainSessionIsClean(t *testing.T) { mcptest.PlainSessions(t) }

// TestInitializedTwice is the duplicated notification sent by hand: a
// second notifications/initialized after the session is ready, then a
// ping. The buggy twin panics on the repeat (exit 2) and never answers the
// ping; the fixed one logs it, answers the ping and exits 0 at EOF.
func TestInitializedTwice(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			p := mcptest.Start(t, v.Args...)
			p.Open(false)
			p.Notify("notifications/initialized", nil)
			p.MayBeGone = !v.Fixed
			ping := p.Request("ping", nil)

			if !v.Fixed {
				code, ok := p.Exit(mcptest.Wait)
				if !ok || code != 2 {
					t.Fatalf("exit status %d, exited %v; want 2 (a panic), true", code, ok)
				}
				if want := `panic: notifications/initialized in state "ready": session already initialized`; !strings.Contains(p.Stderr(), want) {
					t.Errorf("stderr does not say %q:\n%s", want, p.Stderr())
				}
				if n := len(p.Responses(ping)); n != 0 {
					t.Errorf("the ping was answered %d times by a server that died before it", n)
				}
				return
			}

			p.Result(ping)
			if !p.WaitStderr(`notifications/initialized in state "ready": ignored`, mcptest.Wait) {
				t.Errorf("no log line about the repeat; stderr:\n%s", p.Stderr())
			}
			p.CloseStdin()
			if code, ok := p.Exit(mcptest.Wait); !ok || code != 0 {
				t.Errorf("after stdin closed: exit status %d, exited %v; want 0, true", code, ok)
			}
			p.ExpectClean()
		})
	}
}

// TestUnderDuplicateInitialized runs the server under mcpchaos's relay with
// the fault that exposes it, duplicate:on=c2s:notification:notifications/initialized,
// and judges the transcript as mcpchaos test does: the buggy twin crashes
// (go:panic), the fixed twin is clean.
func TestUnderDuplicateInitialized(t *testing.T) {
	for _, v := range mcptest.Variants {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			r := mcptest.StartRelay(t, []string{"duplicate:on=c2s:notification:notifications/initialized"}, 300*time.Millisecond, v.Args...)
			// initialize, answered, and notifications/initialized, which
			// the relay sends on twice. Nothing else is owed: the session
			// ends there, and the repeat is read before the EOF behind it.
			r.Open()
			var got []string
			for _, f := range judge.Session(r.End()).Findings {
				got = append(got, fmt.Sprintf("%s %s %s", f.Severity, f.Kind, f.Signature))
			}
			var want []string
			if !v.Fixed {
				want = []string{"error crash go:panic"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}
