package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
)

// syncBuffer is a bytes.Buffer safe for the redrawing goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Off a terminal (a CI log), one plain line per finished scenario, with
// the findings so far; on one, a live line redrawn in place that names what
// runs, and is erased at the end, before the summary.
func TestProgressLine(t *testing.T) {
	var plain bytes.Buffer
	// The baseline selected with --scenario (as its repro line does) runs
	// once: it is not counted twice.
	p := newProgress(&plain, []faults.Scenario{faults.Baseline, {Name: "eof-inflight"}, {Name: "stall-s2c"}})
	p.Started("baseline")
	p.Finished("baseline", "pass", 0, 300*time.Millisecond)
	p.Started("eof-inflight")
	p.Finished("eof-inflight", "fail", 2, 129*time.Millisecond)
	p.close()
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "mcpchaos: [1/3] baseline: pass, 0 findings, 300ms; 0 findings so far, ") ||
		!strings.HasPrefix(lines[1], "mcpchaos: [2/3] eof-inflight: fail, 2 findings, 129ms; 2 findings so far, ") {
		t.Errorf("plain progress:\n%s", plain.String())
	}

	var live syncBuffer
	l := &progressLine{w: &live, live: true, total: 3, start: time.Now(), stop: make(chan struct{}), stopped: make(chan struct{})}
	go l.redraw()
	l.Started("stall-s2c")
	l.Started("burst-c2s")
	time.Sleep(450 * time.Millisecond)
	l.Finished("stall-s2c", "pass", 0, time.Second)
	l.close()
	out := live.String()
	if !strings.Contains(out, "\r\x1b[K[0/3] running stall-s2c, burst-c2s · 0 findings so far, ") || !strings.HasSuffix(out, "\r\x1b[K") || strings.Contains(out, "\n") {
		t.Errorf("live progress: %q", out)
	}
}
