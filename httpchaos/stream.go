package httpchaos

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/ctxsleep"
	"github.com/mcpchaos/mcpchaos/internal/sse"
	"github.com/mcpchaos/mcpchaos/wire"
)

// stream is an event stream open toward the client. Its relay loop and the
// faults that inject into it from other exchanges write through it.
type stream struct {
	x  *exchange
	mu sync.Mutex
	// broken is the error of the first failed write: nothing more goes.
	broken error
	// queued are the events the relay loop let go of and not yet written:
	// events read together from the server, which lie side by side in the
	// reader's buffer, are one piece, so that they leave in one write.
	// They are written before anything else is, and before the reader
	// reads again (NewSharedReader's beforeRead), which is when they stop
	// being valid.
	queued [][]byte
	// unflushed says something was written and not flushed since.
	unflushed bool
	// lastID is the id of the latest event sent on with one; only the
	// relay loop touches it.
	lastID string
	// cutBy is the fault that cut the stream from another exchange (a
	// fault aimed at the GET stream); keep says it left the server's side
	// open, to be read into the record. Both are set with broken.
	cutBy string
	keep  bool
	reset bool
	// cut is set once they are: the relay loop asks before every event.
	cut atomic.Bool
}

// write writes b and flushes it, and what was queued before it, to the
// client.
func (s *stream) write(b []byte) error { return s.send(b, true) }

// queue queues b, which may be the reader's buffer, to be written when the
// relay loop next flushes (before it reads from the server again) or
// anything else is written: events that came together leave together.
func (s *stream) queue(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	if n := len(s.queued); n > 0 && sse.Adjacent(s.queued[n-1], b) {
		s.queued[n-1] = s.queued[n-1][:len(s.queued[n-1])+len(b)]
		return nil
	}
	s.queued = append(s.queued, b)
	return nil
}

func (s *stream) flush() { _ = s.send(nil, true) }

// errStreamEnded is the write error of a stream whose relay has returned.
var errStreamEnded = errors.New("the stream has ended")

// errCut is the write error of a stream a fault cut.
var errCut = errors.New("the stream was cut by a fault")

// cutFrom cuts the stream from another exchange, as fault label decided
// (a fault aimed at the client's GET stream), and says whether the stream
// was still open. Its relay loop, which may be waiting on the server, is
// woken by the server's side closing; with keep (server=read) that side
// stays open, so the client's connection is closed here, under the lock
// that every write to it takes, and the loop reads what the server still
// sends into the record.
func (s *stream) cutFrom(label string, reset, keep bool) bool {
	x := s.x
	s.mu.Lock()
	if s.broken != nil {
		s.mu.Unlock()
		return false
	}
	_ = s.sendLocked(nil, true) // what went on before the cut reaches the client
	s.broken, s.cutBy, s.reset = errCut, label, reset
	how := "connection cut"
	if keep {
		if h, ok := x.closeConn(reset); ok {
			s.keep, how = true, h
		}
	}
	s.cut.Store(true)
	s.mu.Unlock()
	if s.keep {
		x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Fault: label, Cut: wire.CutClient,
			Detail: how + " by fault " + label + "; the server's side stays open, read into the record"})
		return true
	}
	if reset {
		how = "connection reset"
	}
	x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Fault: label, Cut: wire.CutBoth,
		Detail: how + " by fault " + label + "; the server's side closed too"})
	x.closeUpstream()
	return true
}

// cutState is the fault that cut the stream from another exchange, if one
// did, and how.
func (s *stream) cutState() (label string, reset, keep bool) {
	if !s.cut.Load() {
		return "", false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cutBy, s.reset, s.keep
}

// end stops all writes to the stream: its handler is returning.
func (s *stream) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == nil {
		s.broken = err
	}
}

// send writes what was queued, then b, and flushes when asked. s.mu is
// held throughout, so that writes from other exchanges (injections) come
// between events, never inside one.
func (s *stream) send(b []byte, flush bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendLocked(b, flush)
}

func (s *stream) sendLocked(b []byte, flush bool) error {
	if s.broken != nil {
		s.queued = s.queued[:0]
		return s.broken
	}
	if len(s.queued) == 0 && len(b) == 0 && (!flush || !s.unflushed) {
		return nil
	}
	err := s.x.send(s.queued, b, flush)
	clear(s.queued)
	s.queued = s.queued[:0]
	s.unflushed = !flush
	if err != nil {
		s.broken = err
	}
	return err
}

// relayStream relays an event stream event by event, never buffering it
// whole: each message is framed, judged by the plan, and flushed on.
func (x *exchange) relayStream(resp *http.Response) {
	p := x.p
	x.w.Header().Del("Content-Length")
	x.w.WriteHeader(resp.StatusCode)
	st := &stream{x: x, unflushed: true}
	// The stream is flushed whenever the relay is about to read from the
	// server, the one moment it may block: nothing it queued waits on the
	// server's next event, and events that came together leave together.
	er := sse.NewSharedReader(resp.Body, p.cfg.MaxBody, st.flush)
	// The stream's own wait ends when its server side closes, which a cut
	// from another exchange does to wake it.
	wait := x.upstreamContext()
	x.mu.Lock()
	x.stream, x.answered = st, true
	pending := x.pending
	x.pending = nil
	x.mu.Unlock()
	p.mu.Lock()
	p.streams[x.n] = st
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.streams, x.n)
		p.mu.Unlock()
		st.flush() // what was queued, unless the stream broke
		// An injection that found the stream before it left the map must
		// not write once the handler has returned.
		st.end(errStreamEnded)
		// Nothing queued is written now, so the reader's buffer can go
		// to another stream, unless a cut handed the reader to a
		// goroutine that reads the rest of the stream into the record
		// (detached): it keeps the buffer.
		if !x.detached {
			er.Release()
		}
	}()
	// The head goes out once the stream can be found: a client that sees
	// it open may at once send what triggers a fault aimed at it.
	if err := st.write(nil); err != nil {
		return
	}
	for _, l := range pending {
		x.injectInto(st, l.label, l.inj, l.cause)
	}
	// Events no fault can touch go on as runs when they can. A GET
	// stream's go one by one: each id is kept, to know the stream again.
	runs := p.evrec != nil && !p.weighs(wire.ToClient) && !x.standalone
	for {
		if p.gates[wire.ToClient].closed() || x.standalone && p.getGate.closed() {
			st.flush() // a stall holds what comes after, not what came before
		}
		if !p.gates[wire.ToClient].wait(wait) || x.standalone && !p.getGate.wait(wait) {
			if x.endCutFrom(st, er, nil) {
				return
			}
			p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Detail: "stream ended: the session ended while this direction was stalled"})
			return
		}
		if runs && x.relayRun(st, er) {
			continue
		}
		ev, err := er.Next()
		var got *sse.Event
		if err == nil {
			got = &ev
		}
		if x.endCutFrom(st, er, got) {
			return
		}
		if got != nil && x.standalone && !p.getGate.wait(wait) {
			// The server's own messages are what a stall of the GET
			// stream holds: the one read as it began waits too.
			if x.endCutFrom(st, er, got) {
				return
			}
			p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Detail: "stream ended: the session ended while this stream was stalled"})
			return
		}
		if err != nil {
			if len(ev.Raw) > 0 {
				// An event the server did not finish: the client gets the
				// same bytes, and the record keeps them.
				_ = st.write(ev.Raw)
				e := wire.Event{Type: wire.EventHTTP, Exchange: x.n, EventID: ev.ID, Detail: "an unfinished event at the stream's end, passed on"}
				e.SetRaw(ev.Raw)
				p.record(e)
			}
			p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Detail: "stream ended: " + x.streamEnd(err)})
			return
		}
		if x.standalone && ev.ID != "" {
			p.standaloneIDs.add(ev.ID)
		}
		if err := x.relayEvent(st, er, &ev); err != nil {
			p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Detail: "stream ended: writing to the client failed: " + err.Error()})
			return
		}
	}
}

// relayRun relays the events the reader holds, or reads if it holds none,
// that can go on as one run (sse.Reader.PeekRun), and says whether there
// were any: the rest goes event by event. A run is passed on as it came
// and recorded as it came, framed only when the record is read; nothing
// looks inside it, as nothing would inside each of its events. A stream
// cut from another exchange is left to the event-by-event relay, which
// records what the server sent after the cut, event by event.
func (x *exchange) relayRun(st *stream, er *sse.Reader) bool {
	if st.cut.Load() {
		return false
	}
	run, n, last := er.PeekRun()
	if n == 0 && er.Fill() {
		run, n, last = er.PeekRun()
	}
	if n == 0 || st.queue(run) != nil {
		return false
	}
	er.Skip(len(run))
	x.p.evrec.RecordRelayedEvents(wire.ToClient, x.n, run, n, x.p.rec.Now())
	if last != "" {
		st.lastID = last
	}
	return true
}

// endCutFrom ends the relay of a stream a fault cut from another exchange,
// and says whether it did: with the server's side open, the rest of the
// stream (from ev, the event just read, if any) is read into the record;
// with it closed, the client's connection is cut (or reset) here, on the
// handler's goroutine, and the handler aborts.
func (x *exchange) endCutFrom(st *stream, er *sse.Reader, ev *sse.Event) bool {
	label, reset, keep := st.cutState()
	if label == "" {
		return false
	}
	why := "the client's stream was " + cutWord(reset) + " by fault " + label
	if ev != nil && ev.IsMessage() {
		// Read before the cut reached the server: it sent it.
		x.dropUnread(ev.Data, ev.ID, why)
	}
	if !keep {
		x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Detail: "stream ended: " + why + ", at both ends"})
		if reset {
			x.reset()
		}
		panic(http.ErrAbortHandler)
	}
	x.swallowEvents(er, why)
	x.p.record(wire.Event{Type: wire.EventHTTP, Exchange: x.n, Detail: "stream ended: what the server sent after the cut was read into the record (" + why + ")"})
	return true
}

func (x *exchange) streamEnd(err error) string {
	switch {
	case errors.Is(err, io.EOF):
		return "the server closed it"
	case x.ctx.Err() != nil:
		return ended(x)
	case errors.Is(err, sse.ErrTooLong):
		return err.Error()
	}
	return "reading it failed: " + err.Error()
}

// relayEvent relays one event. A write error means the client is gone.
func (x *exchange) relayEvent(st *stream, er *sse.Reader, ev *sse.Event) error {
	p := x.p
	if !ev.IsMessage() {
		raw := ev.Raw
		detail := "an event without a message"
		if ev.Name == "endpoint" {
			raw, detail = x.rewriteEndpoint(ev)
		}
		e := wire.Event{Type: wire.EventHTTP, Exchange: x.n, EventID: ev.ID, Detail: detail}
		e.SetRaw(ev.Raw)
		p.record(e)
		if ev.ID != "" {
			st.lastID = ev.ID
		}
		return st.queue(raw)
	}
	if p.evrec != nil && !p.weighs(wire.ToClient) && recordableRaw(ev) {
		if err := st.queue(ev.Raw); err == nil {
			p.evrec.RecordRelayedEvent(wire.ToClient, x.n, ev.ID, ev.Data, p.rec.Now())
			if ev.ID != "" {
				st.lastID = ev.ID
			}
			return nil
		}
		// The long way records the message received, then dropped.
	}
	if ev.ID != "" {
		defer func() { st.lastID = ev.ID }()
	}
	if p.weighs(wire.ToClient) {
		return x.relayPlanned(st, er, ev)
	}
	m := wire.Classify(ev.Data)
	seq := x.recordMessage(wire.EventReceived, wire.ToClient, &m, ev.ID, "", 0)
	if err := st.queue(ev.Raw); err != nil {
		x.recordRef(wire.EventDropped, wire.ToClient, seq, "writing to the client failed: "+err.Error())
		return err
	}
	x.recordRef(wire.EventForwarded, wire.ToClient, seq, "")
	return nil
}

// recordableRaw says whether the message of ev can be recorded from its
// bytes as they came (eventRecorder): a transcript reader cuts such bytes
// into frames at each newline, and an event's data holds one only when
// the server split it over data lines.
func recordableRaw(ev *sse.Event) bool {
	return len(ev.Data) > 0 && len(ev.ID) <= wire.MaxRelayedEventID && bytes.IndexByte(ev.Data, '\n') < 0
}

// relayPlanned records and relays the message ev carries, as the plan
// decides. (Its message is its own: the plan may keep it, and without a
// plan relayEvent's stays off the heap.)
func (x *exchange) relayPlanned(st *stream, er *sse.Reader, ev *sse.Event) error {
	p := x.p
	m := wire.Classify(ev.Data)
	step := p.plan.ReceiveOn(wire.ToClient, &m, x.step) // before the record: see faults/landing.go
	seq := x.recordMessage(wire.EventReceived, wire.ToClient, &m, ev.ID, "", 0)
	o := x.apply(p.plan.Decide(faults.Before, step), wire.ToClient, seq, false)
	raw, note, data := ev.Raw, "", ev.Data
	if step.Rewritten != nil {
		raw, note, data = sse.Format(ev.ID, step.Rewritten), step.RewriteNote, step.Rewritten
	}
	if o.reuseIDBy != "" {
		var reused string
		if raw, reused = x.reuseEventID(st, ev, data, raw, o.reuseIDBy); reused != "" {
			note = strings.TrimPrefix(note+"; "+reused, "; ")
		}
	}
	switch {
	case o.cutBy != "":
		why := "the client's stream was " + cutWord(o.reset) + " by fault " + o.cutBy
		x.recordRef(wire.EventDropped, wire.ToClient, seq, why+" before this message")
		x.cut(o.cutBy, o.reset, o.keepServer, func() { x.swallowEvents(er, why) })
	case o.Dropped != "":
		x.recordRef(wire.EventDropped, wire.ToClient, seq, o.Dropped)
	case o.ReplaceBy != "":
		x.recordRef(wire.EventDropped, wire.ToClient, seq, "replaced by fault "+o.ReplaceBy)
		x.injectInto(st, o.ReplaceBy, faults.Injection{Dir: wire.ToClient, Raw: o.Replace}, seq)
	default:
		var err error
		if o.Fragment != nil {
			err = x.writePieces(st, raw, o.Fragment)
		} else {
			err = st.queue(raw)
		}
		if err != nil {
			x.recordRef(wire.EventDropped, wire.ToClient, seq, "writing to the client failed: "+err.Error())
			return err
		}
		x.forwarded(wire.ToClient, data, seq, note)
		for range o.Copies {
			if err := st.queue(raw); err != nil {
				return err
			}
			x.forwarded(wire.ToClient, data, seq, note)
		}
	}
	for _, l := range o.After {
		x.injectInto(st, l.Label, l.Injection, seq)
	}
	if after := x.apply(p.plan.Decide(faults.After, step), wire.ToClient, seq, true); after.cutBy != "" {
		why := "the client's stream was " + cutWord(after.reset) + " by fault " + after.cutBy
		x.cut(after.cutBy, after.reset, after.keepServer, func() { x.swallowEvents(er, why) })
	}
	return st.broken
}

// writePieces writes an event in the pieces a fragment fault cut, flushing
// each and pausing between them.
func (x *exchange) writePieces(st *stream, raw []byte, f *faults.Fragment) error {
	prev := 0
	for _, cut := range append(append([]int(nil), f.Cuts...), len(raw)) {
		if cut <= prev || cut > len(raw) {
			continue
		}
		if prev > 0 && !ctxsleep.Sleep(x.ctx, f.Gap) {
			return x.ctx.Err()
		}
		if err := st.write(raw[prev:cut]); err != nil {
			return err
		}
		prev = cut
	}
	return nil
}

// rewriteEndpoint points the legacy transport's endpoint event at the
// proxy: a relative endpoint already resolves against it; an absolute one
// naming the upstream is given the proxy's host.
func (x *exchange) rewriteEndpoint(ev *sse.Event) ([]byte, string) {
	u, err := url.Parse(strings.TrimSpace(string(ev.Data)))
	if err == nil && (!u.IsAbs() || namesUpstream(u, x.p.cfg.Upstream)) {
		x.p.legacyEndpoint(x.r.URL.ResolveReference(u).Path)
	}
	switch {
	case err != nil || !u.IsAbs():
		return ev.Raw, "the legacy transport's endpoint event, passed on"
	case !namesUpstream(u, x.p.cfg.Upstream):
		return ev.Raw, "the legacy transport's endpoint event, passed on: it names another server (" + u.Host + "), so the client's messages to it do not pass through mcpchaos"
	}
	u.Scheme, u.Host = "http", x.r.Host
	if x.r.TLS != nil {
		u.Scheme = "https"
	}
	out := []byte("event: endpoint\n")
	if ev.ID != "" {
		out = append([]byte("id: "+ev.ID+"\n"), out...)
	}
	out = append(out, "data: "+u.String()+"\n\n"...)
	return out, "the legacy transport's endpoint event, rewritten to point at the proxy: " + u.String()
}

// namesUpstream says whether the absolute URL u reaches the upstream: its
// host as the proxy was given it, or, on the upstream's port, a name of
// the machine itself (localhost, 127.0.0.1, ::1, 0.0.0.0). A server names
// its endpoint as it knows itself, not as it was reached: mcp-go's legacy
// SSE server says localhost when the proxy was given 127.0.0.1.
func namesUpstream(u, upstream *url.URL) bool {
	if strings.EqualFold(u.Host, upstream.Host) {
		return true
	}
	if portOf(u) != portOf(upstream) {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// portOf is u's port, or its scheme's when it names none.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// injectInto writes a message toward the client into st as an event.
func (x *exchange) injectInto(st *stream, label string, inj faults.Injection, cause int64) {
	if inj.Gap > 0 && !ctxsleep.Sleep(x.ctx, inj.Gap) {
		return
	}
	m := wire.Classify(inj.Raw)
	// Before the write: the answer can come back before it returns.
	x.p.injecting(&m, label)
	if err := st.write(sse.Format("", inj.Raw)); err != nil {
		return
	}
	st.x.recordMessage(wire.EventInjected, wire.ToClient, &m, "", label, cause)
}

// injectPending settles the injections toward the client that waited for
// this exchange's stream, now that its response holds none: they go into
// another open stream (the GET stream) or are recorded as skipped.
func (x *exchange) injectPending(why string) {
	x.mu.Lock()
	pending := x.pending
	x.pending, x.answered = nil, true
	x.mu.Unlock()
	for _, l := range pending {
		x.p.injectElsewhere(x, l, why)
	}
}

// injectElsewhere writes an injection toward the client into any open
// stream but from's, or records why it could not be.
func (p *Proxy) injectElsewhere(from *exchange, l labelled, why string) {
	p.mu.Lock()
	var target *stream
	for n, st := range p.streams {
		if n != from.n && (target == nil || n < target.x.n) {
			target = st
		}
	}
	p.mu.Unlock()
	if target == nil {
		p.record(wire.Event{Type: wire.EventFault, Fault: l.label, Of: l.cause, Exchange: from.n,
			Detail: "skipped: no event stream is open toward the client to carry the message (" + why + ")"})
		return
	}
	target.x.injectInto(target, l.label, l.inj, l.cause)
}

// injectTimeout bounds an injected request toward the server.
const injectTimeout = 30 * time.Second
