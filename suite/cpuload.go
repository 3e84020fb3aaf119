package suite

import "runtime"

// cpuSample is the machine's CPU time counters at one moment.
type cpuSample struct{ total, idle uint64 }

// busyThreshold is the share of the machine's CPU time in use above which
// a run counts as made on a busy machine: its handlers and its exit may
// then have been slowed by its neighbours rather than by themselves.
const busyThreshold = 0.85

// cpuWindow measures how busy the machine is over an interval.
type cpuWindow struct {
	start cpuSample
	ok    bool
}

func startCPUWindow(read func() (cpuSample, bool)) cpuWindow {
	s, ok := read()
	return cpuWindow{start: s, ok: ok}
}

// busy returns the share of the machine's CPU time spent, not idle, since
// the window started; ok is false when it cannot be known (no counters, or
// too short an interval for them to move).
func (w cpuWindow) busy(read func() (cpuSample, bool)) (share float64, ok bool) {
	if !w.ok {
		return 0, false
	}
	end, ok := read()
	if !ok || end.total <= w.start.total {
		return 0, false
	}
	total := end.total - w.start.total
	idle := end.idle - w.start.idle
	if idle > total {
		idle = total
	}
	return float64(total-idle) / float64(total), true
}

// cores is how many CPUs this process may use.
func cores() int { return runtime.GOMAXPROCS(0) }
