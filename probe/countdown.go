package probe

import (
	"time"

	"github.com/mcpchaos/mcpchaos/internal/machine"
)

// countdown is a request's deadline. Counted on wall time it is a timer;
// counted at the share of a core the peer could have had (Config.Share),
// it is checked at small steps, and on a machine whose cores are all taken
// it runs as much slower as the peer was held back: a handler slowed by
// its neighbours is given the time it would have had alone.
type countdown struct {
	d     time.Duration
	clock *machine.Clock // nil: wall time
	step  time.Duration
	timer *time.Timer
	begun time.Time
}

func newCountdown(d time.Duration, share func() float64) *countdown {
	c := &countdown{d: d, begun: time.Now()}
	if share == nil {
		c.timer = time.NewTimer(d)
		return c
	}
	c.clock = machine.NewClock(share)
	c.step = min(max(d/50, 10*time.Millisecond), 200*time.Millisecond)
	c.timer = time.NewTimer(c.step)
	return c
}

// C fires when the deadline may have passed; expired says whether it did.
func (c *countdown) C() <-chan time.Time { return c.timer.C }

// expired is called when C fired: true if the deadline passed, otherwise
// it waits on for the next step.
func (c *countdown) expired() bool {
	if c.clock == nil || c.clock.Tick() >= c.d {
		return true
	}
	c.timer.Reset(c.step)
	return false
}

// reset counts d again from now.
func (c *countdown) reset(d time.Duration) {
	c.d, c.begun = d, time.Now()
	if c.clock == nil {
		c.timer.Reset(d)
		return
	}
	c.clock.Reset()
	c.timer.Reset(c.step)
}

// stretch is how much longer than its deadline the countdown ran on the
// wall clock since it was last reset (0 on wall time).
func (c *countdown) stretch() time.Duration {
	if c.clock == nil {
		return 0
	}
	return max(0, time.Since(c.begun)-c.d)
}

func (c *countdown) stop() { c.timer.Stop() }
