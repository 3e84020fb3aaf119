package crosssession

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Streams reads one HTTP transcript whose exchanges may belong to several
// MCP sessions (mcpchaos proxy relaying a user's own clients to one server)
// and finds an answer delivered on the POST stream of one session's request
// that answers a request another session has open: a message seen on a
// session that never asked for it. Over streamable HTTP the answer to a
// POSTed request goes on that POST's stream, so an answer there with
// another id, which another client is waiting for, was routed to the wrong
// client. Its memory follows the requests open, as the judge's does: a
// session's are let go when its DELETE goes by, and past maxStreamsOpen the
// oldest are.
type Streams struct {
	scenario, repro string
	seed            uint64
	// exchanges are the POST exchanges whose request is still unanswered,
	// with the session that sent it and its id.
	exchanges map[int64]*postExchange
	// open are the requests unanswered, by session and id.
	open  map[string]map[string]int64
	count int
	// order holds the exchanges in the order they opened, for eviction.
	order []int64

	found    []reports.Evidence
	first    string
	crossing int
}

type postExchange struct {
	session, id, method string
	ev                  reports.Evidence
	// batch are the ids of the other requests of a batch POST (the
	// 2025-03-26 revision's): their answers belong on its stream too.
	batch []string
}

// maxBatch bounds the ids of a batch POST kept.
const maxBatch = 64

// maxStreamsOpen bounds the requests Streams keeps open, so that a proxy
// that runs for days holds a bounded set whatever its clients leave
// unanswered.
const maxStreamsOpen = 65536

// NewStreams returns a Streams ready for a transcript's events.
func NewStreams() *Streams {
	return &Streams{exchanges: map[int64]*postExchange{}, open: map[string]map[string]int64{}}
}

// Add reads the next event of the transcript.
func (s *Streams) Add(e wire.Event) {
	switch e.Type {
	case wire.EventSession:
		s.scenario, s.repro = e.Scenario, e.Repro
		if e.Seed != nil {
			s.seed = *e.Seed
		}
	case wire.EventHTTP:
		s.http(&e)
	case wire.EventReceived:
		if e.Exchange == 0 || strings.HasPrefix(e.ID, wire.ProbeIDPrefix) {
			return
		}
		if e.Dir == wire.ToServer.String() {
			s.request(&e)
		} else if e.Kind == "response" || e.Kind == "error" {
			s.answer(&e)
		}
	}
}

func (s *Streams) http(e *wire.Event) {
	switch {
	case strings.HasPrefix(e.HTTP, "POST "):
		s.exchanges[e.Exchange] = &postExchange{session: e.MCPSession}
		s.order = append(s.order, e.Exchange)
	case strings.HasPrefix(e.HTTP, "DELETE ") && e.MCPSession != "":
		// The session is over: its requests are owed nothing more.
		for _, ex := range s.open[e.MCPSession] {
			delete(s.exchanges, ex)
		}
		s.count -= len(s.open[e.MCPSession])
		delete(s.open, e.MCPSession)
	case e.Status != 0:
		// The answer's head: a POST that carried no request to keep
		// (a notification, a session's opening) is done with.
		if x := s.exchanges[e.Exchange]; x != nil && x.id == "" {
			delete(s.exchanges, e.Exchange)
		}
	}
}

// request notes the request a POST carried. One that opens a session is
// not kept: its session is not known until the answer's head names it.
func (s *Streams) request(e *wire.Event) {
	x := s.exchanges[e.Exchange]
	switch {
	case x == nil:
		return
	case x.id != "":
		if e.Kind == "request" && len(x.batch) < maxBatch {
			x.batch = append(x.batch, e.ID)
		}
		return
	case e.Kind != "request" || opening(e.Method):
		delete(s.exchanges, e.Exchange)
		return
	}
	x.id, x.method, x.ev = e.ID, e.Method, judge.EvidenceOf(e)
	m := s.open[x.session]
	if m == nil {
		m = map[string]int64{}
		s.open[x.session] = m
	}
	if old, dup := m[e.ID]; dup {
		// The session reused an id still open: the newer request is the
		// one its id now names.
		delete(s.exchanges, old)
	} else {
		s.count++
	}
	m[e.ID] = e.Exchange
	s.evict()
}

// answer checks an answer on a POST's stream against that POST's request.
func (s *Streams) answer(e *wire.Event) {
	x := s.exchanges[e.Exchange]
	if x == nil || x.id == "" || e.ID == "null" || e.ID == "" {
		return
	}
	if e.ID == x.id {
		s.settle(x.session, e.ID)
		return
	}
	if slices.Contains(x.batch, e.ID) {
		return
	}
	for session, m := range s.open {
		if session == x.session {
			continue
		}
		if ex, ok := m[e.ID]; ok {
			owner := s.exchanges[ex]
			s.crossing++
			if s.crossing == 1 {
				s.first = fmt.Sprintf("the POST stream of session %s's %s (id %s) carried an answer to id %s, which session %s had open (its %s): an answer delivered to a client that never asked for it, while the client that did waits",
					short(x.session), x.method, x.id, e.ID, short(session), owner.method)
				s.found = []reports.Evidence{owner.ev, x.ev, judge.EvidenceOf(e)}
			}
			return
		}
	}
}

func (s *Streams) settle(session, id string) {
	m := s.open[session]
	ex, ok := m[id]
	if !ok {
		return
	}
	delete(m, id)
	delete(s.exchanges, ex)
	s.count--
	if len(m) == 0 {
		delete(s.open, session)
	}
}

// evict lets the oldest requests go once too many are open.
func (s *Streams) evict() {
	for s.count > maxStreamsOpen && len(s.order) > 0 {
		ex := s.order[0]
		s.order = s.order[1:]
		if x := s.exchanges[ex]; x != nil && x.id != "" {
			s.settle(x.session, x.id)
		}
		delete(s.exchanges, ex)
	}
	if len(s.order) > 2*maxStreamsOpen {
		// Drop the exchanges already settled from the order, so that it
		// stays bounded too.
		kept := s.order[:0]
		for _, ex := range s.order {
			if s.exchanges[ex] != nil {
				kept = append(kept, ex)
			}
		}
		s.order = kept
	}
}

// Findings are what crossed: one finding, counting the crossings.
func (s *Streams) Findings() []reports.Finding {
	if s.crossing == 0 {
		return nil
	}
	msg := s.first
	if more := s.crossing - 1; more > 0 {
		msg += fmt.Sprintf("; and %d more such answers", more)
	}
	f := reports.NewFinding(reports.RuleCrossSessionMessage, msg, s.found)
	f.Scenario, f.Seed, f.Repro = s.scenario, s.seed, s.repro
	return []reports.Finding{f}
}

// short is a session id cut for a message.
func short(id string) string {
	if id == "" {
		return "(none)"
	}
	if len(id) > 8 {
		return id[:8] + "…"
	}
	return id
}
