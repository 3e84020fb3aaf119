package faults

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpchaos/mcpchaos/wire"
)

// landingRig feeds a plan message by message as a transport does, and keeps
// each request's step for Refused and ReceiveOn.
type landingRig struct {
	t     *testing.T
	p     *Plan
	steps map[string]*Step // the requests' steps, by frame text
}

func newLandingRig(t *testing.T, specs ...string) *landingRig {
	return &landingRig{t: t, p: NewPlan(42, mustParse(t, specs...)), steps: map[string]*Step{}}
}

// send receives f (on the exchange of request on, when not zero) and
// decides before it; it returns the step, what the receiver gets and the
// last decision's detail.
func (r *landingRig) send(f frame, on frame) (*Step, string, string) {
	r.t.Helper()
	m := classify(r.t, f)
	var step *Step
	if on.raw != "" {
		step = r.p.ReceiveOn(f.dir, &m, r.steps[on.raw])
	} else {
		step = r.p.Receive(f.dir, &m)
	}
	if m.Kind == wire.Request {
		r.steps[f.raw] = step
	}
	raw, detail := f.raw, step.RewriteNote
	if step.Rewritten != nil {
		raw = string(step.Rewritten)
	}
	for _, fi := range r.p.Decide(Before, step) {
		detail = fi.Effect.Detail
		if fi.Effect.Rewrite != nil {
			raw = string(fi.Effect.Rewrite)
		}
	}
	return step, raw, detail
}

// misses says each miss as "label of seq: detail", checking that it names
// its fault.
func misses(p *Plan, ms []Miss) []string {
	var out []string
	for _, m := range ms {
		if i := slices.Index(p.labels, m.Label); i < 0 || p.faults[i] != m.Fault {
			out = append(out, "a miss of another fault than its label's: "+m.Label)
			continue
		}
		out = append(out, fmt.Sprintf("%s of %d: %s", m.Label, m.Of, m.Detail))
	}
	return out
}

func call(id string) frame { return request(c2s, id, "tools/call", "") }

// A request lends its id only while its receiver holds it: one refused
// (an HTTP error status answered it) or answered with an error is not in
// flight, and the collision skips rather than borrow it.
func TestIDCollisionLendsOnlyAHeldRequest(t *testing.T) {
	discover := request(c2s, "1", "server/discover", "")
	t.Run("refused with an HTTP error status", func(t *testing.T) {
		r := newLandingRig(t, "id-collision")
		d, _, _ := r.send(discover, frame{})
		if ms := r.p.Refused(d, "the server answered it HTTP 400"); len(ms) != 0 {
			t.Errorf("misses %+v; want none: nothing borrowed its id", ms)
		}
		_, raw, detail := r.send(call("2"), frame{})
		if raw != call("2").raw || !strings.HasPrefix(detail, "skipped: no other request") {
			t.Errorf("tools/call 2 went on as %q (%q); want it skipped, unchanged: the refused server/discover is held by nobody", raw, detail)
		}
		_, raw, detail = r.send(call("3"), frame{})
		if want := call("2").raw; raw != want || !strings.Contains(detail, "id 2 (was 3), the id of the tools/call request") {
			t.Errorf("tools/call 3 went on as %q (%q); want %q, colliding with the tools/call in flight", raw, detail, want)
		}
	})
	t.Run("answered with a JSON-RPC error", func(t *testing.T) {
		r := newLandingRig(t, "id-collision")
		r.send(discover, frame{})
		r.send(errorAnswer(s2c, "1"), frame{})
		_, raw, detail := r.send(call("2"), frame{})
		if raw != call("2").raw || !strings.HasPrefix(detail, "skipped: no other request") {
			t.Errorf("tools/call 2 went on as %q (%q); want it skipped: server/discover was answered", raw, detail)
		}
	})
	t.Run("still unanswered", func(t *testing.T) {
		// Before an answer or a refusal, a request is held as far as
		// anyone knows (an answer as a JSON body comes whole at the end).
		r := newLandingRig(t, "id-collision")
		r.send(discover, frame{})
		_, raw, _ := r.send(call("2"), frame{})
		if want := call("1").raw; raw != want {
			t.Errorf("tools/call 2 went on as %q; want %q", raw, want)
		}
	})
}

// A collision lands only when the lender is still held as the borrower
// reaches the receiver; otherwise the firing did not land, says why, and
// gives the fault back its firing.
func TestIDCollisionThatDoesNotLand(t *testing.T) {
	t.Run("the lender is answered before the borrower goes on", func(t *testing.T) {
		r := newLandingRig(t, "id-collision")
		r.send(call("1"), frame{})
		b, raw, _ := r.send(call("2"), frame{})
		if raw != call("1").raw {
			t.Fatalf("tools/call 2 went on as %q; want the collision", raw)
		}
		r.send(response(s2c, "1"), frame{}) // between the decision and the write
		want := []string{"id-collision#1 of 7: did not land: the tools/call request (id 1) whose id it took was answered before this request went on to the server"}
		if diff := cmp.Diff(want, misses(r.p, r.p.Delivered(b, 7))); diff != "" {
			t.Fatalf("misses (-want +got):\n%s", diff)
		}
		if ms := r.p.Delivered(b, 7); len(ms) != 0 {
			t.Errorf("a second Delivered missed again: %+v", ms)
		}
		// The borrower's answer goes back under its own id; the fault,
		// given back its firing, collides the next call.
		if _, raw, _ := r.send(response(s2c, "1"), frame{}); raw != response(s2c, "2").raw {
			t.Errorf("the borrower's answer went back as %q; want id 2", raw)
		}
		r.send(call("3"), frame{})
		if _, raw, _ := r.send(call("4"), frame{}); raw != call("3").raw {
			t.Errorf("tools/call 4 went on as %q; want it to collide with 3: a firing that did not land does not use up times=", raw)
		}
	})
	t.Run("the lender is held as the borrower goes on", func(t *testing.T) {
		r := newLandingRig(t, "id-collision")
		r.send(call("1"), frame{})
		b, _, _ := r.send(call("2"), frame{})
		if ms := r.p.Delivered(b, 7); len(ms) != 0 {
			t.Fatalf("misses %+v; want none", ms)
		}
		r.send(response(s2c, "1"), frame{})
		r.send(response(s2c, "1"), frame{})
		r.send(call("3"), frame{})
		if _, raw, detail := r.send(call("4"), frame{}); raw != call("4").raw || detail != "" {
			t.Errorf("tools/call 4 went on as %q (%q); want it untouched: the fault fired once, and landed", raw, detail)
		}
	})
	t.Run("the server refuses the lender after the borrower went on", func(t *testing.T) {
		r := newLandingRig(t, "id-collision")
		l, _, _ := r.send(call("1"), frame{})
		b, _, _ := r.send(call("2"), frame{})
		if ms := r.p.Delivered(b, 7); len(ms) != 0 {
			t.Fatalf("misses %+v; want none yet", ms)
		}
		want := []string{"id-collision#1 of 7: did not land: the tools/call request (id 1) whose id it took was refused after this request went on (the server answered it HTTP 503): the server never held the two together"}
		if diff := cmp.Diff(want, misses(r.p, r.p.Refused(l, "the server answered it HTTP 503"))); diff != "" {
			t.Fatalf("misses (-want +got):\n%s", diff)
		}
		// The refused lender takes no answer: the next one with id 1 is
		// the borrower's.
		if _, raw, _ := r.send(response(s2c, "1"), frame{}); raw != response(s2c, "2").raw {
			t.Errorf("the answer with id 1 went back as %q; want id 2", raw)
		}
		if n := len(r.p.inflight.sent(c2s)); n != 0 {
			t.Errorf("%d requests still in flight", n)
		}
	})
	t.Run("the server fails the lender after the borrower went on", func(t *testing.T) {
		// A server error status (5xx) answers a request the server held.
		r := newLandingRig(t, "id-collision")
		l, _, _ := r.send(call("1"), frame{})
		b, _, _ := r.send(call("2"), frame{})
		if ms := r.p.Delivered(b, 7); len(ms) != 0 {
			t.Fatalf("misses %+v; want none", ms)
		}
		r.p.Failed(l)
		if ms := r.p.Refused(l, "too late"); len(ms) != 0 {
			t.Errorf("misses %+v after the lender was answered; want none", ms)
		}
		if _, raw, _ := r.send(response(s2c, "1"), frame{}); raw != response(s2c, "2").raw {
			t.Errorf("the answer with id 1 went back as %q; want id 2", raw)
		}
	})
	t.Run("the lender is refused before the borrower goes on", func(t *testing.T) {
		r := newLandingRig(t, "id-collision")
		l, _, _ := r.send(call("1"), frame{})
		b, _, _ := r.send(call("2"), frame{})
		if ms := r.p.Refused(l, "the server answered it HTTP 404"); len(ms) != 0 {
			t.Fatalf("misses %+v; want none before the borrower went on", ms)
		}
		want := []string{"id-collision#1 of 9: did not land: the tools/call request (id 1) whose id it took was never held by the server (the server answered it HTTP 404)"}
		if diff := cmp.Diff(want, misses(r.p, r.p.Delivered(b, 9))); diff != "" {
			t.Errorf("misses (-want +got):\n%s", diff)
		}
	})
}

// Over HTTP each answer comes on the exchange of its own request: it goes
// back to that request whichever of two colliding requests the receiver
// finished first.
func TestIDCollisionAnswersByExchange(t *testing.T) {
	r := newLandingRig(t, "id-collision")
	r.send(call("1"), frame{})
	r.send(call("2"), frame{}) // on as id 1
	var got []string
	for _, a := range []struct{ f, on frame }{{response(s2c, "1"), call("2")}, {response(s2c, "1"), call("1")}} {
		_, raw, _ := r.send(a.f, a.on)
		got = append(got, raw)
	}
	if want := []string{response(s2c, "2").raw, response(s2c, "1").raw}; !cmp.Equal(want, got) {
		t.Errorf("answers went back as %q; want %q: the borrower finished first, on its own exchange", got, want)
	}
	if n := len(r.p.inflight.sent(c2s)); n != 0 {
		t.Errorf("%d requests still in flight", n)
	}
}
