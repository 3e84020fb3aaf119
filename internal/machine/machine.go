package machine

import (
	"runtime"
	"time"
)

// CPUSample is the machine's CPU time counters at one moment, in clock
// ticks over all cores.
type CPUSample struct{ Total, Idle uint64 }

// Window measures how busy the machine is over an interval.
type Window struct {
	start CPUSample
	ok    bool
	read  func() (CPUSample, bool)
}

// StartWindow starts measuring with read (nil: ReadCPU).
func StartWindow(read func() (CPUSample, bool)) Window {
	if read == nil {
		read = ReadCPU
	}
	s, ok := read()
	return Window{start: s, ok: ok, read: read}
}

// Busy returns the share of the machine's CPU time spent, not idle, since
// the window started; ok is false when it cannot be known (no counters, or
// too short an interval for them to move).
func (w Window) Busy() (share float64, ok bool) {
	if !w.ok {
		return 0, false
	}
	end, ok := w.read()
	if !ok || end.Total <= w.start.Total {
		return 0, false
	}
	total := end.Total - w.start.Total
	idle := min(end.Idle-w.start.Idle, total)
	return float64(total-idle) / float64(total), true
}

// Cores is how many CPUs this process may use.
func Cores() int { return runtime.GOMAXPROCS(0) }

// Clock counts time in what a process competing for the CPU could use of
// it: a second on an idle machine is a second, on a machine where each
// process ready to run gets a third of a core it is a third. Deadlines
// counted so measure the peer, not the machine. The zero Clock, or one
// whose share is nil, counts wall time.
type Clock struct {
	share   func() float64
	last    time.Time
	elapsed time.Duration
}

// NewClock starts a clock that counts with share (nil: wall time).
func NewClock(share func() float64) *Clock {
	return &Clock{share: share, last: time.Now()}
}

// Tick adds the time since the last tick at the share of a core a process
// gets now, and returns the time counted since the clock was reset.
func (c *Clock) Tick() time.Duration {
	now := time.Now()
	d := now.Sub(c.last)
	c.last = now
	if c.share != nil {
		d = time.Duration(float64(d) * max(0.01, min(1, c.share())))
	}
	c.elapsed += d
	return c.elapsed
}

// Reset starts counting again from zero.
func (c *Clock) Reset() {
	c.last, c.elapsed = time.Now(), 0
}
