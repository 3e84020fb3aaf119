package machine

import (
	"testing"
	"time"
)

// On a machine where the peer gets a fifth of a core, a deadline counted at
// its share lasts five times as long on the wall clock, and says by how
// much it was stretched; on wall time it is a timer.
func TestTimerStretchesWithTheShare(t *testing.T) {
	wait := func(c *Timer) time.Duration {
		start := time.Now()
		for {
			<-c.C()
			if c.Expired() {
				return time.Since(start)
			}
		}
	}
	slow := NewTimer(100*time.Millisecond, func() float64 { return 0.2 })
	defer slow.Stop()
	if took := wait(slow); took < 450*time.Millisecond || took > 5*time.Second {
		t.Errorf("a 100ms deadline at a fifth of a core took %v, want about 500ms", took)
	}
	if s := slow.Stretch(); s < 300*time.Millisecond {
		t.Errorf("Stretch() = %v, want about 400ms", s)
	}
	wall := NewTimer(100*time.Millisecond, nil)
	defer wall.Stop()
	if took := wait(wall); took < 100*time.Millisecond || took > 2*time.Second {
		t.Errorf("a 100ms deadline on wall time took %v", took)
	}
	if s := wall.Stretch(); s != 0 {
		t.Errorf("Stretch() on wall time = %v", s)
	}
}
