//go:build unix

package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStackedFaultsCompose pins how the relay applies stacked faults (see
// the faults package doc): in plan order; the first drop or replace of the
// triggering message wins; copies add up when the message is forwarded. The
// server is cat, so what reaches it comes back to the client.
func TestStackedFaultsCompose(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`
	const marker = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	tests := []struct {
		name  string
		specs []string
		want  []string // the lines the server got, marker excluded
	}{
		{"no fault", nil, []string{call}},
		{"copies add up", []string{"duplicate:on=c2s:request", "duplicate:on=c2s:request,count=3"}, []string{call, call, call, call}},
		{"an earlier replace wins over a later drop", []string{"corrupt:on=c2s:request,mode=text", "drop:on=c2s:request"}, []string{"mcpchaos: not json"}},
		{"an earlier drop wins over a later replace", []string{"drop:on=c2s:request", "corrupt:on=c2s:request,mode=text"}, nil},
		{"a drop leaves nothing to copy", []string{"duplicate:on=c2s:request", "drop:on=c2s:request"}, nil},
		{"the first of two replaces wins", []string{"corrupt:on=c2s:request,mode=text", "corrupt:on=c2s:request,mode=newline"}, []string{"mcpchaos: not json"}},
		{"tool= picks the call by its tool", []string{"drop:tool=ech*"}, nil},
		{"tool= passes other tools", []string{"drop:tool=slow"}, []string{call}},
		{"id= picks the call by its id", []string{"duplicate:id=1"}, []string{call, call}},
		{"until= in the past passes everything", []string{"drop:on=c2s:request,from=0s,until=1ns"}, []string{call}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := startRelay(t, Config{Command: helperCommand(t, "cat"), Plan: mustPlan(t, 1, tc.specs...)})
			time.Sleep(time.Millisecond) // until=1ns has passed on the session clock
			if _, err := r.In.WriteString(call + "\n" + marker + "\n"); err != nil {
				t.Fatal(err)
			}
			r.In.Close()
			var got []string
			for _, line := range strings.Split(string(readAll(t, r.Out, 10*time.Second)), "\n") {
				if line != "" && line != marker {
					got = append(got, line)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the server got (-want +got):\n%s", diff)
			}
		})
	}
}

// The relay gives the plan its recorder's clock: from= counts from the
// session's start (T 0 of the transcript), not from when the plan was made.
func TestPlanUsesTheSessionClock(t *testing.T) {
	plan := mustPlan(t, 1, "drop:on=c2s:request,from=200ms")
	time.Sleep(300 * time.Millisecond) // on the plan's own clock, from= has passed
	r := startRelay(t, Config{Command: helperCommand(t, "cat"), Plan: plan})
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	if _, err := r.In.WriteString(ping); err != nil {
		t.Fatal(err)
	}
	r.In.Close()
	if got := string(readAll(t, r.Out, 10*time.Second)); got != ping {
		t.Errorf("relayed %q; from=200ms must not fire on the session's first message", got)
	}
}
