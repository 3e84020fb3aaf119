package probe

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
)

// The hostile workloads reach the everything server, every request of
// them is answered (the server validates), and the polite workload's
// coverage is untouched by them.
func TestHostileWorkloads(t *testing.T) {
	for _, level := range HostileWorkloads {
		t.Run(level, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			r, w := serveEverything(t)
			out, _, err := run(t, Config{Hostile: level, Deadline: 5 * time.Second, Seed: 1}, r, w)
			if err != nil {
				t.Fatal(err)
			}
			var whats []string
			ids := map[string]bool{}
			growth := 0
			for _, req := range out.Requests {
				if req.Hostile == "" {
					continue
				}
				if req.Growth {
					growth++
				} else {
					whats = append(whats, req.Hostile)
				}
				ids[req.ID] = true
				if !req.Answered {
					t.Errorf("%s (id %s) was not answered: %s", req.Hostile, req.ID, req.Error)
				}
			}
			wants := []string{"the id 0", "a negative id", "a string argument of 16 KiB"}
			if level == HostileWide {
				wants = []string{"the id 0", "a negative id", "a string argument of 1 MiB", "tools/call without params", "tools/call with params null", "tools/call with params an array"}
			}
			for _, want := range wants {
				if !slices.Contains(whats, want) {
					t.Errorf("the %s workload did not send %q; it sent %q", level, want, whats)
				}
			}
			if !ids["0"] || !ids["-1"] {
				t.Errorf("ids %v: want 0 and -1 among them", ids)
			}
			if out.Coverage == nil || out.Coverage.Hostile != len(whats) || out.Coverage.Growth != growth {
				t.Errorf("coverage counts %+v hostile and growth requests, want %d and %d", out.Coverage, len(whats), growth)
			}
			if level == HostileSample && len(whats) > 16 {
				t.Errorf("the sample sent %d requests, want it bounded (at most 16)", len(whats))
			}
			if level == HostileWide {
				if len(whats) > maxHostile {
					t.Errorf("the wide workload sent %d requests, more than %d", len(whats), maxHostile)
				}
				if !slices.ContainsFunc(whats, func(w string) bool { return strings.HasPrefix(w, "a tool call without its required argument") }) {
					t.Errorf("the wide workload broke no tool's schema: %q", whats)
				}
			}
		})
	}
}

// A scenario file's workload may ask for them by name.
func TestHostileWorkloadsInStep(t *testing.T) {
	if !slices.Equal(HostileWorkloads, faults.HostileWorkloads) {
		t.Errorf("probe.HostileWorkloads %q, faults.HostileWorkloads %q: keep them in step", HostileWorkloads, faults.HostileWorkloads)
	}
}

// Without Hostile, none is sent.
func TestNoHostileByDefault(t *testing.T) {
	r, w := serveEverything(t)
	out, _, err := run(t, Config{Deadline: 5 * time.Second}, r, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range out.Requests {
		if req.Hostile != "" {
			t.Errorf("sent %q without a hostile workload", req.Hostile)
		}
	}
}
