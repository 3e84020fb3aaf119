package faults

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/wire"
)

// TestMessageFaultsParse checks the defaults and the parameter checks of
// delay, drop, duplicate and corrupt.
func TestMessageFaultsParse(t *testing.T) {
	tests := []struct {
		spec  string
		want  Action
		phase Phase
	}{
		{"delay", delay{d: 500 * time.Millisecond}, Before},
		{"delay:for=2s,jitter=100ms", delay{d: 2 * time.Second, jitter: 100 * time.Millisecond}, Before},
		{"delay:for=1s,position=after", delay{d: time.Second}, After},
		{"drop", drop{}, Before},
		{"drop:position=before", drop{}, Before},
		{"duplicate", duplicate{count: 2}, Before},
		{"duplicate:count=5", duplicate{count: 5}, Before},
		{"duplicate:count=3,position=after", duplicate{count: 3}, After},
		{"corrupt", corrupt{mode: "json"}, Before},
		{"corrupt:mode=truncate", corrupt{mode: "truncate"}, Before},
		{"corrupt:mode=version", corrupt{mode: "version"}, Before},
		{"corrupt:mode=newline", corrupt{mode: "newline"}, Before},
		{"corrupt:mode=text", corrupt{mode: "text"}, Before},
	}
	for _, tc := range tests {
		f := mustParse(t, tc.spec)[0]
		if diff := cmp.Diff(tc.want, f.Action, cmpOpts); diff != "" {
			t.Errorf("%s: action (-want +got):\n%s", tc.spec, diff)
		}
		if f.Trigger.Phase != tc.phase {
			t.Errorf("%s: phase %v; want %v", tc.spec, f.Trigger.Phase, tc.phase)
		}
	}
	bad := []struct{ spec, want string }{
		{"delay:for=soon", "not a duration"},
		{"delay:jitter=-1s", "not a duration"},
		{"drop:position=after", "position: after is not possible"},
		{"corrupt:position=after", "position: after is not possible"},
		{"corrupt:mode=bits", `"bits" is not one of json, truncate, version, newline, text`},
		{"duplicate:count=1", "count: must be between 2"},
		{"duplicate:count=0", "count: must be between 2"},
		{"duplicate:count=1000000", "count: must be between 2"},
		{"drop:count=2", `drop has no parameter "count"`},
	}
	for _, tc := range bad {
		_, err := Parse(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v; want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

func TestMessageFaultsEffects(t *testing.T) {
	resp := response(s2c, "7")
	frames := []frame{request(c2s, "7", "tools/call", ""), resp}
	body := strings.TrimSuffix(resp.raw, "\n")
	half := len(body) / 2
	tests := []struct {
		spec string
		want Effect
	}{
		{"delay:on=s2c", Effect{Delay: 500 * time.Millisecond, Detail: "hold the message for 500ms"}},
		{"delay:on=s2c,for=1s", Effect{Delay: time.Second, Detail: "hold the message for 1s"}},
		{"drop:on=s2c", Effect{Drop: true, Detail: "drop the message"}},
		{"duplicate:on=s2c", Effect{Copies: 1, Detail: "forward the message 2 times"}},
		{"duplicate:on=s2c,count=4", Effect{Copies: 3, Detail: "forward the message 4 times"}},
		{"corrupt:on=s2c", Effect{Replace: []byte(body[:half] + "\n"), Detail: fmt.Sprintf("replace the message with its first %d of %d bytes (cut JSON)", half, len(body))}},
		{"corrupt:on=s2c,mode=truncate", Effect{Replace: []byte(body[:half]), Detail: fmt.Sprintf("replace the message with its first %d of %d bytes and no line ending (a truncated frame: the next one is glued to it)", half, len(body))}},
		{"corrupt:on=s2c,mode=version", Effect{Replace: []byte(`{"jsonrpc":"1.0","id":7,"result":{}}` + "\n"), Detail: `replace the message with a copy whose jsonrpc is "1.0"`}},
		{"corrupt:on=s2c,mode=newline", Effect{Replace: []byte(body[:half] + "\n" + body[half:] + "\n"), Detail: fmt.Sprintf("replace the message with a copy split by a newline after byte %d", half)}},
		{"corrupt:on=s2c,mode=text", Effect{Replace: []byte("mcpchaos: not json\n"), Detail: "replace the message with the non-JSON line mcpchaos: not json"}},
	}
	for _, tc := range tests {
		got := runPlan(t, 1, []string{tc.spec}, frames)
		want := []decision{{At: 2, Phase: Before, Label: strings.SplitN(tc.spec, ":", 2)[0] + "#1", Spec: tc.spec, Effect: tc.want}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: decisions (-want +got):\n%s", tc.spec, diff)
		}
	}
}

// TestCorruptModesAreMalformed: every replacement is something a receiver
// must reject, and json and version keep the line ending of the original.
func TestCorruptModesAreMalformed(t *testing.T) {
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + "\n",
		`{ "jsonrpc" : "2.0", "method":"notifications/progress"}` + "\r\n",
		`{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}`,
	} {
		m := wire.Classify([]byte(raw))
		_, end := splitEnding([]byte(raw))
		for _, mode := range []string{"json", "version", "newline", "text"} {
			e := corrupt{mode: mode}.Fire(&FireContext{Dir: s2c, Message: &m})
			if e.Skipped || e.Replace == nil {
				t.Fatalf("%s on %q: %+v", mode, raw, e)
			}
			if mode == "json" || mode == "version" || mode == "newline" {
				if !strings.HasSuffix(string(e.Replace), string(end)) {
					t.Errorf("%s on %q: %q lost the line ending", mode, raw, e.Replace)
				}
			}
			lines := strings.SplitAfter(strings.TrimSuffix(string(e.Replace), string(end)), "\n")
			if mode == "newline" && len(lines) != 2 {
				t.Errorf("newline on %q: %q is not two lines", raw, e.Replace)
			}
			for _, l := range lines {
				if got := wire.Classify([]byte(l)); got.Kind != wire.Invalid && got.Problem == "" {
					t.Errorf("%s on %q: line %q is a valid message", mode, raw, l)
				}
			}
		}
	}
	m := wire.Classify([]byte("not json\n"))
	if e := (corrupt{mode: "version"}).Fire(&FireContext{Message: &m}); !e.Skipped {
		t.Errorf("version on a line without jsonrpc: %+v; want skipped", e)
	}
}

// TestDelayJitterFromSeed: the jitter is drawn from the seed, so the same
// seed gives the same delays, other seeds others, all within [for, for+jitter].
func TestDelayJitterFromSeed(t *testing.T) {
	spec := "delay:for=100ms,jitter=1s,times=0"
	frames := pingPong(20)
	delays := func(seed uint64) []time.Duration {
		var out []time.Duration
		for _, d := range runPlan(t, seed, []string{spec}, frames) {
			out = append(out, d.Effect.Delay)
		}
		return out
	}
	first := delays(7)
	if len(first) != len(frames) {
		t.Fatalf("fired %d times over %d messages", len(first), len(frames))
	}
	if diff := cmp.Diff(first, delays(7)); diff != "" {
		t.Errorf("seed 7 drew different delays (-first +second):\n%s", diff)
	}
	if cmp.Equal(first, delays(8)) {
		t.Error("seeds 7 and 8 drew the same delays")
	}
	distinct := map[time.Duration]bool{}
	for _, d := range first {
		if d < 100*time.Millisecond || d > 1100*time.Millisecond {
			t.Errorf("delay %s outside [100ms, 1.1s]", d)
		}
		distinct[d] = true
	}
	if len(distinct) < len(first)/2 {
		t.Errorf("only %d distinct delays in %v", len(distinct), first)
	}
	// Without jitter nothing is drawn and every delay is the same.
	for _, d := range runPlan(t, 7, []string{"delay:for=100ms,times=0"}, frames) {
		if d.Effect.Delay != 100*time.Millisecond {
			t.Errorf("delay without jitter = %s", d.Effect.Delay)
		}
	}
}
