package judge

import "math"

// never is a time that does not come: the end of a stall that lasts for ever.
const never = math.MaxInt64

// window is a span [start, end) during which a stall fault held one
// direction; end is never for a stall that outlived the session.
type window struct{ start, end int64 }

// stalls is the merged, time-ordered set of windows during which mcpchaos
// stopped reading what the peer under test wrote. A request's deadline does
// not run while its answer could not have been read.
type stalls struct {
	w []window
	// shares are the cpu-share events in time order: from each one's t on,
	// a deadline runs at its share of a core (1 before the first).
	shares []shareFrom
}

// shareFrom is the share of a core the peer could have had from t on.
type shareFrom struct {
	t     int64
	share float64
}

// share records a cpu-share event: from t on, time counts at share.
func (s *stalls) share(t int64, share float64) {
	s.shares = append(s.shares, shareFrom{t, min(1, max(share, 0.01))})
}

// shareAt returns the share in force at t and when it next changes.
func (s *stalls) shareAt(t int64) (share float64, until int64) {
	share, until = 1, never
	for _, c := range s.shares {
		if c.t > t {
			return share, c.t
		}
		share = c.share
	}
	return share, until
}

// add records a stall from start until end. Stall events come in time order,
// so a new window either extends the last one or follows it; merging keeps
// the set as small as the distinct stalled spans.
func (s *stalls) add(start, end int64) {
	if n := len(s.w); n > 0 && start <= s.w[n-1].end {
		s.w[n-1].end = max(s.w[n-1].end, end)
		return
	}
	s.w = append(s.w, window{start, end})
}

// endBy is w's end as a transcript that ends at endT saw it: a stall that
// had not lifted by then lasts for ever.
func (w window) endBy(endT int64) int64 {
	if w.end > endT {
		return never
	}
	return w.end
}

// deadline is when a request forwarded at from, given budget microseconds of
// time during which its answer could have been read, is overdue. The budget
// does not run while a stall holds the peer's output (one that had not
// lifted by endT, the end of the session, counts as for ever: the transcript
// never saw it lift), and runs at the share of a core in force otherwise
// (cpu-share events; a whole core without them). forever reports that the
// budget was never used up.
func (s *stalls) deadline(from, budget, endT int64) (d int64, forever bool) {
	t, left := from, float64(budget)
	for {
		held := false
		next := int64(never) // when the next stall starts
		for _, w := range s.w {
			end := w.endBy(endT)
			if end <= t {
				continue
			}
			if w.start <= t {
				if end == never {
					return never, true
				}
				t, held = end, true
			} else {
				next = w.start
			}
			break
		}
		if held {
			continue
		}
		share, changes := s.shareAt(t)
		until := min(next, changes)
		need := int64(math.Ceil(left / share))
		if until == never || t+need <= until {
			return t + need, false
		}
		left -= float64(until-t) * share
		t = until
	}
}

// heldAt reports whether a stall held the peer's output at time at.
func (s *stalls) heldAt(at, endT int64) bool {
	for _, w := range s.w {
		if w.start <= at && at < w.endBy(endT) {
			return true
		}
	}
	return false
}
