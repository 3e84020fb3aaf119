package probe

import (
	"testing"
	"time"
)

// On a machine where the peer gets a fifth of a core, a deadline counted at
// its share lasts five times as long on the wall clock, and says by how
// much it was stretched; on wall time it is a timer.
func TestCountdownStretchesWithTheShare(t *testing.T) {
	wait := func(c *countdown) time.Duration {
		start := time.Now()
		for {
			<-c.C()
			if c.expired() {
				return time.Since(start)
			}
		}
	}
	slow := newCountdown(100*time.Millisecond, func() float64 { return 0.2 })
	defer slow.stop()
	if took := wait(slow); took < 450*time.Millisecond || took > 5*time.Second {
		t.Errorf("a 100ms deadline at a fifth of a core took %v, want about 500ms", took)
	}
	if s := slow.stretch(); s < 300*time.Millisecond {
		t.Errorf("stretch() = %v, want about 400ms", s)
	}
	wall := newCountdown(100*time.Millisecond, nil)
	defer wall.stop()
	if took := wait(wall); took < 100*time.Millisecond || took > 2*time.Second {
		t.Errorf("a 100ms deadline on wall time took %v", took)
	}
	if s := wall.stretch(); s != 0 {
		t.Errorf("stretch() on wall time = %v", s)
	}
}
