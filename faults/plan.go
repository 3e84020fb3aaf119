package faults

import (
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
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
	fault int    // the firing fault's index in the plan
	step  *Step
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
	// req is the in-flight entry of the message when it is a request.
	req *Pending
	// landings are the firings on this message whose effect must still
	// land when the message reaches its receiver (see Delivered).
	landings []*landing
	at       time.Duration // since the session started, when from=/until= are used
	ordinal  uint64        // in this direction
	global   uint64        // across both directions
	armed    []bool        // per fault: may this message trigger it (after=)
	armedFew [8]bool       // armed's storage for plans of up to 8 faults
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
	seed uint64
	// drawSeed is what the draws derive from: seed, or a session's own
	// (InSession).
	drawSeed uint64
	faults   []*Fault
	labels   []string
	keys     []uint64

	mu       sync.Mutex
	state    []triggerState
	inflight *inFlight
	ids      idMap
	ordinals [3]atomic.Uint64 // indexed by wire.Direction
	global   atomic.Uint64
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
	// track says the plan keeps the requests in flight: some fault or
	// trigger reads them (see needsInFlight).
	track bool
	// hasAfter says a trigger uses after=, whose state Receive updates.
	hasAfter bool
	// watches says, per direction, whether the plan looks at the messages
	// travelling that way (see Watches).
	watches [3]bool
	// reachesAll says some fault may act beyond the message that fired
	// it (see Reaches).
	reachesAll bool
	// phases says, per Phase, whether some fault fires in it.
	phases [3]bool
	// serial says each direction's messages are received and decided by
	// one goroutine at a time (see Serial); owner then names, per fault,
	// the direction whose goroutine alone keeps its trigger's count.
	serial bool
	owner  []wire.Direction
	// serialOrdinals are ordinals' counts when serial: each is kept by
	// its direction's goroutine alone.
	serialOrdinals [3]uint64
}

// PlanOption changes how a Plan is set up.
type PlanOption func(*Plan)

// WithClock gives the plan the time since the session started, which from=
// and until= are measured on. Without it the plan measures from NewPlan.
func WithClock(now func() time.Duration) PlanOption {
	return func(p *Plan) { p.now = now }
}

// InSession makes the plan session k's of a scenario of several sessions:
// its draws come from the seed SessionSeed gives session k, so that the
// sessions' faults do not move in lockstep, while Seed stays the
// scenario's, which every session's record names and its repro replays.
func InSession(k int) PlanOption {
	return func(p *Plan) { p.drawSeed = SessionSeed(p.seed, k) }
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
		drawSeed: seed,
		faults:   faults,
		state:    make([]triggerState, len(faults)),
		inflight: newInFlight(),
		ids:      idMap{},
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
		p.track = p.track || needsInFlight(f)
		p.hasAfter = p.hasAfter || f.Trigger.After != nil
		p.needClock = p.needClock || f.Trigger.From > 0 || f.Trigger.Until > 0
		p.reachesAll = p.reachesAll || !f.Family.Local
		if d := f.Trigger.On.Dir; d != 0 {
			p.watches[d] = true
		} else {
			p.watches[wire.ToServer], p.watches[wire.ToClient] = true, true
		}
		p.phases[f.Trigger.Phase] = true
		perFamily[f.Family.Name]++
		p.labels = append(p.labels, f.Family.Name+"#"+strconv.Itoa(perFamily[f.Family.Name]))
		p.keys = append(p.keys, faultKey(f.Spec, sameSpec[f.Spec]))
		sameSpec[f.Spec]++
	}
	// The client's messages say the era, which injections speak.
	p.watches[wire.ToServer] = len(faults) > 0
	if p.track || p.hasAfter {
		p.watches[wire.ToClient] = true
	}
	return p
}

// Serial tells the plan, before traffic flows, that the transport receives
// and decides each direction's messages on one goroutine, in order, as the
// stdio relay's pumps do. The plan then keeps the count of a trigger that
// only one direction can match without the lock both directions share:
// most messages of a session match such a trigger and leave it unfired.
func (p *Plan) Serial() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serial = true
	p.owner = make([]wire.Direction, len(p.faults))
	for i, f := range p.faults {
		t := &f.Trigger
		// after= and inflight= read what both directions change.
		if t.On.Dir != 0 && t.After == nil && t.InFlight == 0 {
			p.owner[i] = t.On.Dir
		}
	}
}

// Watches reports whether the plan looks at the messages travelling in dir:
// a fault's trigger may match one, it keeps the requests in flight, an
// after= counts every message, or (toward the server) the era they say. A
// relay that records nothing need not read, nor give Receive, a message
// the plan does not watch: every decision the plan makes comes out the same.
func (p *Plan) Watches(dir wire.Direction) bool { return p.watches[dir] }

// Reaches reports whether the plan may have a say in the messages
// travelling in dir: it watches them, or one of its faults may act beyond
// the message that fired it (inject, stall, close a pipe, signal the
// server), which a relay can only do to a direction it frames. A relay
// that records nothing may pass a direction the plan does not reach on as
// bytes, unframed (the stdio relay splices it).
func (p *Plan) Reaches(dir wire.Direction) bool { return p.watches[dir] || p.reachesAll }

// Seed is the seed every draw derives from.
func (p *Plan) Seed() uint64 { return p.seed }

// Faults returns the faults in plan order.
func (p *Plan) Faults() []*Fault { return p.faults }

// Empty reports whether the plan has no faults, letting the relay skip it.
func (p *Plan) Empty() bool { return len(p.faults) == 0 }

// Receive records a message read from the peer sending in dir. It must be
// called once for every received frame, in the order frames were read.
func (p *Plan) Receive(dir wire.Direction, m *wire.Message) *Step {
	s := new(Step)
	p.ReceiveInto(s, dir, m)
	return s
}

// ReceiveInto is Receive into a Step the caller keeps: a relay that reads one
// direction on one goroutine reuses one Step for it, which spares an
// allocation per message. s is valid until the next call with it.
func (p *Plan) ReceiveInto(s *Step, dir wire.Direction, m *wire.Message) {
	p.receive(s, dir, m, nil)
}

// ReceiveOn is Receive for a message that came on the HTTP exchange whose
// request req carried (a POST's JSON answer or event stream): an answer
// there answers req, so that when an id collision has the receiver hold
// two requests under one id, each answer goes back to the request of its
// own exchange, whichever the server finished first. req may be nil (a
// GET stream's message), which is Receive.
func (p *Plan) ReceiveOn(dir wire.Direction, m *wire.Message, req *Step) *Step {
	s := new(Step)
	p.receive(s, dir, m, req)
	return s
}

func (p *Plan) receive(s *Step, dir wire.Direction, m *wire.Message, req *Step) {
	armed := s.armed[:0] // kept: a plan of many faults allocates it once
	if cap(armed) == 0 {
		armed = s.armedFew[:0]
	}
	*s = Step{Dir: dir, Message: m}
	// Allocated before the lock the two directions share, which is held for
	// as little as can be.
	var fresh *Pending
	if m.Kind == wire.Request && p.track {
		fresh = new(Pending)
	}
	if p.serial {
		p.serialOrdinals[dir]++
		s.ordinal = p.serialOrdinals[dir]
	} else {
		s.ordinal = p.ordinals[dir].Add(1)
	}
	if p.track || p.hasAfter {
		// Only after= and the requests in flight read the order across
		// both directions, which costs an atomic operation a message.
		s.global = p.global.Add(1)
	}
	// Most messages of most plans change no state the two directions
	// share: they need not take the lock both directions contend for.
	if p.track || p.hasAfter || (dir == wire.ToServer && m.Era != wire.EraUnknown) {
		p.mu.Lock()
		defer p.mu.Unlock()
	}
	if dir == wire.ToServer && m.Era != wire.EraUnknown {
		p.era = m.Era
		if meta := clientMeta(m); meta != nil {
			p.meta = meta
		}
	}
	if p.track {
		var orig string
		if req != nil && req.Dir == dir.Reverse() && req.Message != nil && req.Message.Kind == wire.Request {
			orig = req.Message.ID
		}
		p.observe(s, dir, m, fresh, orig)
	}
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
	if len(p.faults) > cap(armed) {
		armed = make([]bool, 0, len(p.faults))
	}
	s.armed = armed[:len(p.faults)]
	for i, f := range p.faults {
		s.armed[i] = f.Trigger.armedFor(&p.state[i], dir, m, method, s.global)
	}
}

// observe keeps the table of requests in flight up to date with m, and
// tells s which request m answers and what the sender's id rewrites make of
// it. orig, when not "", is the sender's id of the request m is known to
// answer if it is an answer (see ReceiveOn).
func (p *Plan) observe(s *Step, dir wire.Direction, m *wire.Message, fresh *Pending, orig string) {
	seen := m
	raw, note := p.ids.translate(dir, m, orig)
	if raw == nil {
		raw, note = p.translateCancel(dir, m)
	}
	if raw != nil {
		t := wire.Classify(raw)
		seen, s.Rewritten, s.RewriteNote = &t, raw, note
	}
	if seen != m && seen.Kind == wire.Request && fresh == nil {
		fresh = new(Pending)
	}
	s.Answers = p.inflight.observe(dir, seen, s.global, fresh)
	if seen.Kind == wire.Request {
		s.req = fresh
	}
}

// needsInFlight reports whether fault f reads the requests in flight: its
// action does, or its trigger counts them (inflight=), names a tool (tool=
// of an answer is its request's), or matches answers by method, which is
// their request's.
func needsInFlight(f *Fault) bool {
	t := &f.Trigger
	if f.Family.InFlight || t.InFlight > 0 || t.Tool != "" || answersByMethod(t.On) {
		return true
	}
	return t.After != nil && answersByMethod(*t.After)
}

// answersByMethod reports whether p can match an answer by its method.
func answersByMethod(p Pattern) bool {
	if p.Method == "" {
		return false
	}
	return !p.Kinded || p.Kind == wire.Response || p.Kind == wire.Error || p.Kind == wire.Invalid
}

// Decide returns the faults that fire on s in phase, in plan order, with what
// each asks the transport to do.
func (p *Plan) Decide(phase Phase, s *Step) []Firing {
	if !p.phases[phase] {
		return nil
	}
	method := s.Method()
	// Most messages match no fault's moment, or match one that counts them
	// and stays unfired: tell so from the step, the fixed triggers and the
	// counts this goroutine keeps alone, without the lock both directions
	// contend for.
	locked := false
	var due uint64 // owned faults whose count says they fire
	for i, f := range p.faults {
		if !p.matches(i, &f.Trigger, phase, s, method) {
			continue
		}
		if p.owns(i, s.Dir) {
			if f.Trigger.candidate(&p.state[i]) {
				due |= 1 << i
				locked = true
			}
			continue
		}
		locked = true
	}
	if !locked {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Firing
	for i, f := range p.faults {
		t := &f.Trigger
		switch {
		case p.owns(i, s.Dir):
			if due&(1<<i) == 0 {
				continue // counted above
			}
		case !p.matches(i, t, phase, s, method):
			continue
		case t.InFlight > 0 && p.inflight.count() < t.InFlight:
			continue
		case !t.candidate(&p.state[i]):
			continue
		}
		draws := newDraws(p.drawSeed, p.keys[i], s.Dir, s.ordinal)
		if t.HasP && !(draws.Float64() < t.P) {
			continue
		}
		c := &FireContext{Dir: s.Dir, Message: s.Message, Answers: s.Answers, Draws: draws, Phase: phase, Era: p.era, plan: p, label: p.labels[i], fault: i, step: s}
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

// owns reports whether fault i's count is kept by the goroutine deciding
// the messages travelling in dir alone (see Serial): only they can match
// its trigger, and nothing else reads its state. A plan of more than 64
// faults keeps the rest under the lock.
func (p *Plan) owns(i int, dir wire.Direction) bool {
	return p.serial && i < 64 && p.owner[i] == dir
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
