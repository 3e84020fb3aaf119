package machine

import "time"

// Timer is a deadline counted on a Clock. Counted on wall time (share nil)
// it is a time.Timer; counted at the share of a core a process could have
// had, it is checked at small steps, and on a machine whose cores are all
// taken it runs as much slower as the process was held back: a peer slowed
// by its neighbours is given the time it would have had alone.
type Timer struct {
	d     time.Duration
	clock *Clock // nil: wall time
	step  time.Duration
	timer *time.Timer
	begun time.Time
}

// NewTimer starts a deadline of d counted at share (nil: wall time).
func NewTimer(d time.Duration, share func() float64) *Timer {
	t := &Timer{d: d, begun: time.Now()}
	if share == nil {
		t.timer = time.NewTimer(d)
		return t
	}
	t.clock = NewClock(share)
	t.step = min(max(d/50, 10*time.Millisecond), 200*time.Millisecond)
	t.timer = time.NewTimer(t.step)
	return t
}

// C fires when the deadline may have passed; Expired says whether it did.
func (t *Timer) C() <-chan time.Time { return t.timer.C }

// Expired is called when C fired: true if the deadline passed, otherwise
// the timer waits on for its next step.
func (t *Timer) Expired() bool {
	if t.clock == nil || t.clock.Tick() >= t.d {
		return true
	}
	t.timer.Reset(t.step)
	return false
}

// Reset counts d again from now.
func (t *Timer) Reset(d time.Duration) {
	t.d, t.begun = d, time.Now()
	if t.clock == nil {
		t.timer.Reset(d)
		return
	}
	t.clock.Reset()
	t.timer.Reset(t.step)
}

// Stretch is how much longer than its deadline the timer ran on the wall
// clock since it was last reset (0 on wall time).
func (t *Timer) Stretch() time.Duration {
	if t.clock == nil {
		return 0
	}
	return max(0, time.Since(t.begun)-t.d)
}

// Stop releases the timer.
func (t *Timer) Stop() { t.timer.Stop() }
