package probe

import "slices"

// Coverage says how much of what the server declares a session exercised:
// the baseline's note is made of it, so that a server author knows which
// handlers no fault ever reached, and why.
type Coverage struct {
	// Callable are the requests the server's capabilities make callable in
	// the session's era, the handshake aside, in a fixed order
	// (MethodToolCallTask stands for a tools/call made as a task).
	Callable []string
	// Sent are those of Callable the session sent, in the same order.
	Sent []string
	// NotSent are the others, each with why it was not sent.
	NotSent []NotSent
	// Sampled says where the workload sent less than it could have: a
	// sample of a long listing, a listing not followed to its end.
	Sampled []string
	// Deliberate are the requests sent to be refused (unknown tool, bad
	// arguments, unknown method), by what they were.
	Deliberate []string
	// Hostile counts the requests of the hostile workload sent, Growth
	// those of its growth series.
	Hostile, Growth int
}

// NotSent is a callable request the session did not send.
type NotSent struct {
	Method string
	Why    string
}

// why records why method was not sent; the first reason given stands.
func (s *session) why(method, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.whyNot == nil {
		s.whyNot = map[string]string{}
	}
	if _, ok := s.whyNot[method]; !ok {
		s.whyNot[method] = reason
	}
}

// goOn says whether the workload beyond the tool calls may send method: not
// once a request went unanswered, which is then why method was not sent.
func (s *session) goOn(method string) bool {
	s.mu.Lock()
	first := s.unanswered
	s.mu.Unlock()
	if first == "" && !s.ended() {
		return true
	}
	if first != "" {
		s.why(method, "the server had left "+first+" unanswered")
	} else {
		s.why(method, "the session ended first")
	}
	return false
}

// sampled records where the workload bounded itself; "" is nothing.
func (s *session) sampled(note string) {
	if note == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, note)
}

// coverage compares what the capabilities make callable with what was sent.
func (s *session) coverage(caps serverCapabilities, era string) *Coverage {
	s.mu.Lock()
	defer s.mu.Unlock()
	sent := map[string]bool{}
	c := &Coverage{Callable: caps.callable(era), Sampled: slices.Clone(s.samples)}
	for _, r := range s.requests {
		switch {
		case r.Growth:
			c.Growth++
		case r.Hostile != "":
			c.Hostile++
		case r.Deliberate != "":
			if !slices.Contains(c.Deliberate, r.Deliberate) {
				c.Deliberate = append(c.Deliberate, r.Deliberate)
			}
		case r.AsTask:
			sent[MethodToolCallTask] = true
		default:
			sent[r.Method] = true
		}
	}
	for _, m := range c.Callable {
		if sent[m] {
			c.Sent = append(c.Sent, m)
			continue
		}
		why := s.whyNot[m]
		if why == "" {
			why = "the session ended first"
		}
		c.NotSent = append(c.NotSent, NotSent{Method: m, Why: why})
	}
	return c
}
