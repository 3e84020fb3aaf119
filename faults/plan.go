package faults

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// FireContext is what an Action sees when its trigger fires.
type FireContext struct {
	Dir     wire.Direction
	Message *wire.Message
	// Answers is the request the message answers, when it is an answer to a
	// request we saw.
	Answers *Pending
	Draws   *Draws
	// Phase is when the fault fires: before or after the message is forwarded.
	Phase Phase
	// Era is the session's protocol era as the client's messages last said
	// (EraUnknown until one does).
	Era   wire.Era
	plan  *Plan
	label string // the firing fault's label, e.g. "id-type#1"
}

// InjectID returns a fresh id for a request the fault injects: the JSON text
// of a string starting with wire.InjectIDPrefix, numbered per session in the
// order faults fire, so a replay gets the same ids.
func (c *FireContext) InjectID() string {
	c.plan.injected++
	return wire.InjectIDPrefix + strconv.FormatUint(c.plan.injected, 10) + `"`
}

// Sent lists the requests travelling in dir that are still unanswered, oldest first.
func (c *FireContext) Sent(dir wire.Direction) []*Pending { return c.plan.inflight.sent(dir) }

// Firing is one fault firing on one message.
type Firing struct {
	Fault  *Fault
	Label  string // e.g. "burst#2": family and position in the plan
	Effect Effect
}

// Step is one received message as the plan saw it. The transport gets it from
// Receive and passes it to Decide for each phase.
type Step struct {
	Dir     wire.Direction
	Message *wire.Message
	Answers *Pending
	// Tool is the tool name of a tools/call request or of the request an
	// answer answers; it is read only when a trigger uses tool=.
	Tool string
	// Rewritten, when not nil, is what the transport forwards instead of
	// Message.Raw: an answer to a request an id fault rewrote, with the id
	// the request's sender gave it, or a cancellation of such a request,
	// with the id its receiver got (see idmap.go). RewriteNote says so in
	// words for the transcript.
	Rewritten   []byte
	RewriteNote string
	at          time.Duration // since the session started, when from=/until= are used
	ordinal     uint64        // in this direction
	global      uint64        // across both directions
	armed       []bool        // per fault: may this message trigger it (after=)
}

// Method is the message's method or, for an answer, its request's method.
func (s *Step) Method() string {
	if s.Answers != nil && s.Message.IsAnswer() {
		return s.Answers.Method
	}
	return s.Message.Method
}

// Plan is the fault plan of one session. It is safe for the two directions of
// a session to use concurrently.
type Plan struct {
	seed   uint64
	faults []*Fault
	labels []string
	keys   []uint64

	mu       sync.Mutex
	state    []triggerState
	inflight *inFlight
	ids      idMap
	ordinals map[wire.Direction]uint64
	global   uint64
	// era is the latest era the client's messages said: a client may try
	// server/discover and fall back to initialize.
	era wire.Era
	// meta is the _meta of the client's latest stateless request, which
	// injections toward the server carry (statelessmeta.go).
	meta json.RawMessage
	// injected counts the requests faults injected, for their ids.
	injected uint64

	// now is the session's clock, read only when a trigger uses from= or
	// until=; needTool says a trigger uses tool=.
	now       func() time.Duration
	needClock bool
	needTool  bool
}

// PlanOption changes how a Plan is set up.
type PlanOption func(*Plan)

// WithClock gives the plan the time since the session started, which from=
// and until= are measured on. Without it the plan measures from NewPlan.
func WithClock(now func() time.Duration) PlanOption {
	return func(p *Plan) { p.now = now }
}

// SetClock replaces the plan's clock before traffic flows: the relay calls it
// with its recorder's clock, so that from= and until= count from the moment
// the transcript does.
func (p *Plan) SetClock(now func() time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now = now
}

// NewPlan fixes the faults of a session before traffic flows.
func NewPlan(seed uint64, faults []*Fault, opts ...PlanOption) *Plan {
	p := &Plan{
		seed:     seed,
		faults:   faults,
		state:    make([]triggerState, len(faults)),
		inflight: newInFlight(),
		ids:      idMap{},
		ordinals: map[wire.Direction]uint64{},
	}
	start := time.Now()
	p.now = func() time.Duration { return time.Since(start) }
	for _, o := range opts {
		o(p)
	}
	perFamily := map[string]int{}
	sameSpec := map[string]int{}
	for _, f := range faults {
		p.needTool = p.needTool || f.Trigger.Tool != ""
		p.needClock = p.needClock || f.Trigger.From > 0 || f.Trigger.Until > 0
		perFamily[f.Family.Name]++
		p.labels = append(p.labels, f.Family.Name+"#"+strconv.Itoa(perFamily[f.Family.Name]))
		p.keys = append(p.keys, faultKey(f.Spec, sameSpec[f.Spec]))
		sameSpec[f.Spec]++
	}
	return p
}

// Seed is the seed every draw derives from.
func (p *Plan) Seed() uint64 { return p.seed }

// Faults returns the faults in plan order.
func (p *Plan) Faults() []*Fault { return p.faults }

// Empty reports whether the plan has no faults, letting the relay skip it.
func (p *Plan) Empty() bool { return len(p.faults) == 0 }

// Receive records a message read from the peer sending in dir. It must be
// called once for every received frame, in the order frames were read.
func (p *Plan) Receive(dir wire.Direction, m *wire.Message) *Step {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ordinals[dir]++
	p.global++
	s := &Step{Dir: dir, Message: m, ordinal: p.ordinals[dir], global: p.global}
	if dir == wire.ToServer && m.Era != wire.EraUnknown {
		p.era = m.Era
		if meta := clientMeta(m); meta != nil {
			p.meta = meta
		}
	}
	seen := m
	raw, note := p.ids.translate(dir, m)
	if raw == nil {
		raw, note = p.translateCancel(dir, m)
	}
	if raw != nil {
		t := wire.Classify(raw)
		seen, s.Rewritten, s.RewriteNote = &t, raw, note
	}
	s.Answers = p.inflight.observe(dir, seen, p.global)
	if p.needTool {
		switch {
		case m.Kind == wire.Request && m.Method == "tools/call":
			s.Tool = toolName(m.Raw)
			if open := p.inflight.open[dir][m.ID]; open != nil {
				open.Tool = s.Tool
			}
		case s.Answers != nil && m.IsAnswer():
			s.Tool = s.Answers.Tool
		}
	}
	if p.needClock {
		s.at = p.now()
	}
	method := s.Method()
	s.armed = make([]bool, len(p.faults))
	for i, f := range p.faults {
		s.armed[i] = f.Trigger.armedFor(&p.state[i], dir, m, method, s.global)
	}
	return s
}

// Decide returns the faults that fire on s in phase, in plan order, with what
// each asks the transport to do.
func (p *Plan) Decide(phase Phase, s *Step) []Firing {
	method := s.Method()
	// Most messages match no fault's moment: tell so from the step and the
	// fixed triggers alone, without the lock both directions contend for.
	matched := false
	for i, f := range p.faults {
		if p.matches(i, &f.Trigger, phase, s, method) {
			matched = true
			break
		}
	}
	if !matched {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Firing
	for i, f := range p.faults {
		t := &f.Trigger
		if !p.matches(i, t, phase, s, method) {
			continue
		}
		if t.InFlight > 0 && p.inflight.count() < t.InFlight {
			continue
		}
		if !t.candidate(&p.state[i]) {
			continue
		}
		draws := newDraws(p.seed, p.keys[i], s.Dir, s.ordinal)
		if t.HasP && !(draws.Float64() < t.P) {
			continue
		}
		c := &FireContext{Dir: s.Dir, Message: s.Message, Answers: s.Answers, Draws: draws, Phase: phase, Era: p.era, plan: p, label: p.labels[i]}
		effect := f.Action.Fire(c)
		if p.era == wire.Stateless && p.meta != nil {
			metaInjections(effect.Inject, p.meta)
			metaInjections(effect.InjectAfter, p.meta)
		}
		if !effect.Skipped {
			p.state[i].fired++
		}
		out = append(out, Firing{Fault: f, Label: p.labels[i], Effect: effect})
	}
	return out
}

// matches is the part of fault i's trigger that reads only the step and the
// trigger itself, both fixed once Receive has returned: its phase, after=,
// pattern, time window, id and tool.
func (p *Plan) matches(i int, t *Trigger, phase Phase, s *Step, method string) bool {
	if t.Phase != phase || !s.armed[i] || !t.On.Matches(s.Dir, s.Message, method) {
		return false
	}
	if !t.inWindow(s.at) || t.ID != "" && !idMatches(t.ID, s.Message.ID) {
		return false
	}
	return t.Tool == "" || s.Tool != "" && glob(t.Tool, s.Tool)
}
