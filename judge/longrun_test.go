package judge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The judge of a proxy that runs for days (issue 31): what it keeps does
// not grow with the calls or the sessions it has seen.

func TestAnsweredKeepsTheLatestAnswerPerIDForAnsweredCapAnswers(t *testing.T) {
	var a recentAnswers
	a.put(answeredEntry{id: "x", seq: 1})
	for i := range answeredCap - 1 {
		a.put(answeredEntry{id: fmt.Sprint(i), seq: int64(i + 2)})
	}
	if a.get("x") == nil {
		t.Fatalf("the answer to x is forgotten %d answers later; it must be remembered for %d", answeredCap-1, answeredCap)
	}
	a.put(answeredEntry{id: "y"})
	if a.get("x") != nil {
		t.Errorf("the answer to x is still remembered %d answers later", answeredCap)
	}
	if n := len(a.byID); n > answeredCap+1 {
		t.Errorf("%d ids kept after %d answers to distinct ids; the sweep keeps at most %d", n, answeredCap+1, answeredCap+1)
	}
	// A later answer to the same id takes the place of the earlier one.
	for range 3 * answeredCap {
		a.put(answeredEntry{id: "1"})
	}
	if n := len(a.byID); n != 1 {
		t.Errorf("%d ids kept after %d answers to id 1; want 1", n, 3*answeredCap)
	}
}

// sessionsServedAfterDelete is a proxy's transcript of n sessions, each
// DELETEd and then sent a POST that the server serves, gap ms apart.
func sessionsServedAfterDelete(n int, gap float64) *tb {
	b := httpSession()
	for i := range n {
		s := fmt.Sprintf("s%d", i)
		x := int64(3 * i)
		b.at(float64(i) * gap).add(wire.Event{Type: wire.EventHTTP, Exchange: x + 1, HTTP: "DELETE /mcp", MCPSession: s})
		b.add(wire.Event{Type: wire.EventHTTP, Exchange: x + 1, Status: 200})
		b.add(wire.Event{Type: wire.EventHTTP, Exchange: x + 2, HTTP: "POST /mcp", MCPSession: s})
		b.add(wire.Event{Type: wire.EventHTTP, Exchange: x + 2, Status: 200, Detail: "response: application/json"})
	}
	return b
}

func TestServedAfterDeleteIsAFewFindingsAndACount(t *testing.T) {
	b := sessionsServedAfterDelete(1000, 1)
	b.end("the proxy got SIGTERM")
	fs := Session(b.evs).Findings
	if len(fs) != maxServedAfterDelete {
		t.Fatalf("%d findings for 1000 sessions served after their DELETE; want %d and a count", len(fs), maxServedAfterDelete)
	}
	for _, f := range fs {
		if f.Rule != reports.RuleServedAfterDelete {
			t.Errorf("finding %s: %s", f.Rule, f.Message)
		}
	}
	if want := "and 997 more sessions served after their DELETE"; !strings.Contains(fs[len(fs)-1].Message, want) {
		t.Errorf("the last finding does not say %q:\n%s", want, fs[len(fs)-1].Message)
	}
}

func TestEndedSessionsAreLetGo(t *testing.T) {
	// A session a minute, for a thousand minutes: only those of the last
	// endedKept are still remembered.
	b := sessionsServedAfterDelete(1000, 60_000)
	j := New()
	for i := range b.evs {
		j.add(&b.evs[i])
	}
	kept := int(endedKeptUS/60_000_000) + 1
	if n := len(j.se.ended); n > kept {
		t.Errorf("%d ended sessions remembered after 1000 minutes; want at most the %d of the last %d minutes", n, kept, endedKeptUS/60_000_000)
	}
	if n := len(j.se.reported); n > kept {
		t.Errorf("%d sessions' findings remembered; want at most %d", n, kept)
	}
	// A request endedKept after the DELETE is not held against the server.
	late := httpSession()
	late.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, HTTP: "DELETE /mcp", MCPSession: "s"})
	late.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 200})
	late.at(float64(endedKeptUS)/1000 + 1).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "POST /mcp", MCPSession: "s"})
	late.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 200})
	late.end("the proxy got SIGTERM")
	if fs := Session(late.evs).Findings; len(fs) != 0 {
		t.Errorf("a POST %d µs after the DELETE was judged: %v", endedKeptUS, fs)
	}
	// One sent just before is.
	soon := httpSession()
	soon.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, HTTP: "DELETE /mcp", MCPSession: "s"})
	soon.add(wire.Event{Type: wire.EventHTTP, Exchange: 1, Status: 200})
	soon.at(float64(endedKeptUS)/1000 - 1).add(wire.Event{Type: wire.EventHTTP, Exchange: 2, HTTP: "POST /mcp", MCPSession: "s"})
	soon.add(wire.Event{Type: wire.EventHTTP, Exchange: 2, Status: 200})
	soon.end("the proxy got SIGTERM")
	if fs := Session(soon.evs).Findings; len(fs) != 1 || fs[0].Rule != reports.RuleServedAfterDelete {
		t.Errorf("a POST just within %d µs of the DELETE, served: %v; want served-after-delete", endedKeptUS, fs)
	}
}

// An upstream restarted under a long-running proxy shows in the report:
// the requests answered 502 meanwhile are counted in a note.
func TestUnreachableUpstreamIsNoted(t *testing.T) {
	b := httpSession()
	for i := range 3 {
		b.at(float64(1000 + 500*i)).add(wire.Event{Type: wire.EventError, Exchange: int64(i + 1), HTTP: "POST /mcp",
			Detail: "the upstream could not be reached: dial tcp 127.0.0.1:3000: connect: connection refused"})
	}
	b.end("the proxy got SIGTERM")
	v := Session(b.evs)
	want := "the upstream could not be reached for 3 requests, between 1s and 2s: mcpchaos answered them 502 (was the server down or restarting?)"
	checkNotes(t, []string{want}, v.Notes)
	if len(v.Findings) != 0 {
		t.Errorf("findings %v; the server is not blamed for being away", v.Findings)
	}
}
