package faults

import "fmt"

// MaxSessions bounds how many sessions one scenario runs against one server:
// enough for the cross-session bugs (two sessions show them; a few more
// make the races likelier), few enough that a run stays a test and not a
// load test, which needs a tool of its own.
const MaxSessions = 16

// Sessions is how many probe sessions the scenario runs at once against one
// server: its workload's; without one, two when a fault names a session (a
// fault confined to one session needs another beside it: it is how
// mcpchaos test --fault ...,session=1 replays a plan of explore's
// second-session family), or as many as the highest it names; else one.
func (s Scenario) Sessions() int {
	if s.Workload.Sessions > 0 {
		return s.Workload.Sessions
	}
	n := 1
	for _, spec := range s.Faults {
		if f, err := Parse(spec); err == nil && f.Trigger.Session > 0 {
			n = max(n, 2, f.Trigger.Session)
		}
	}
	return n
}

// CheckSessions refuses a fault that names a session the scenario does not
// run, which could never fire.
func (s Scenario) CheckSessions(parsed []*Fault) error {
	n := s.Sessions()
	for _, f := range parsed {
		if f.Trigger.Session > n {
			if n == 1 {
				return fmt.Errorf("scenario %s: fault %q: session=%d, but the scenario runs one session (give it workload: sessions: %d, or drop session=)",
					s.Name, f.Spec, f.Trigger.Session, f.Trigger.Session)
			}
			return fmt.Errorf("scenario %s: fault %q: session=%d, but the scenario runs %d sessions", s.Name, f.Spec, f.Trigger.Session, n)
		}
	}
	return nil
}

// SessionFaults are the faults that act in session k (1 is the first): those
// that name it, and those that name no session.
func SessionFaults(parsed []*Fault, k int) []*Fault {
	var out []*Fault
	for _, f := range parsed {
		if f.Trigger.Session == 0 || f.Trigger.Session == k {
			out = append(out, f)
		}
	}
	return out
}

// SessionSeed is the seed of session k's plan: the scenario's own for the
// first session, so that a one-session scenario keeps its schedule, and one
// drawn from it for each other, so that the sessions' faults do not move in
// lockstep.
func SessionSeed(seed uint64, k int) uint64 {
	if k <= 1 {
		return seed
	}
	return splitmix(seed ^ 0x73657373696f6e00 ^ uint64(k)) // "session"
}
