package suite

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// A server that logs to stderr as fast as it can (issue 9: "a server that
// logs to stderr heavily") is judged in bounded memory: every line is
// drained and judged, none is kept unless a transcript is asked for. Held in
// memory, a second of `yes` on stderr took 800 MB.
func TestHeavyStderrIsJudgedInBoundedMemory(t *testing.T) {
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	report, err := Run(ctx, Options{
		Command:   []string{"sh", "-c", `yes "a log line the server writes to stderr, over and over" >&2 & exec "$0" serve`, mcpchaosBin},
		Scenarios: []faults.Scenario{mustPreset(t, "stall-s2c")},
		Seed:      1,
	})
	close(stop)
	<-sampled
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if report.Outcome != reports.OutcomePass {
		var b strings.Builder
		reports.WriteSummary(&b, report)
		t.Errorf("outcome %s, want pass:\n%s", report.Outcome, b.String())
	}
	if p := peak.Load(); p > 256<<20 {
		t.Errorf("the heap peaked at %d MiB while the server flooded its stderr, want it bounded", p>>20)
	}
	t.Logf("heap peak %d MiB over %d ms of stall-s2c", peak.Load()>>20, report.Scenarios[0].DurationMS)
}

func mustPreset(t *testing.T, name string) faults.Scenario {
	t.Helper()
	for _, sc := range faults.PresetsFor(faults.ForServer) {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no preset %s", name)
	return faults.Scenario{}
}
