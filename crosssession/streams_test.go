package crosssession

import (
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/wire"
)

// proxyScript is one proxy's record of several MCP sessions' exchanges.
type proxyScript struct{ script }

func (p *proxyScript) post(ex int64, session, id, method string) *proxyScript {
	p.add(wire.Event{Type: wire.EventHTTP, Exchange: ex, HTTP: "POST /mcp", MCPSession: session})
	e := wire.Event{Type: wire.EventReceived, Dir: "c2s", Kind: "request", ID: id, Method: method, Exchange: ex}
	e.SetRaw([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"}`))
	p.add(e)
	return p
}

func (p *proxyScript) answered(ex int64, id string) *proxyScript {
	p.add(wire.Event{Type: wire.EventHTTP, Exchange: ex, Status: 200, MCPSession: "x"})
	e := wire.Event{Type: wire.EventReceived, Dir: "s2c", Kind: "response", ID: id, Exchange: ex}
	e.SetRaw([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`))
	p.add(e)
	return p
}

func (p *proxyScript) deleted(ex int64, session string) *proxyScript {
	p.add(wire.Event{Type: wire.EventHTTP, Exchange: ex, HTTP: "DELETE /mcp", MCPSession: session})
	return p
}

func TestStreams(t *testing.T) {
	seed := uint64(3)
	start := func() *proxyScript {
		p := &proxyScript{}
		p.add(wire.Event{Type: wire.EventSession, Scenario: "proxy", Seed: &seed, Repro: "mcpchaos proxy --seed 3"})
		return p
	}
	for _, tc := range []struct {
		name string
		p    *proxyScript
		want string
	}{
		{"each answer on its own POST's stream, ids alike across sessions",
			start().post(1, "A", "3", "tools/call").post(2, "B", "3", "tools/call").answered(2, "3").answered(1, "3"), ""},
		{"another session's answer on a POST's stream",
			start().post(1, "A", "3", "tools/call").post(2, "B", "7", "resources/read").answered(1, "7").answered(1, "3"),
			"the POST stream of session A's tools/call (id 3) carried an answer to id 7, which session B had open (its resources/read)"},
		{"an answer under another id of the same session is not a crossing",
			start().post(1, "A", "3", "tools/call").post(2, "A", "7", "tools/call").answered(1, "7"), ""},
		{"a batch POST's answers on its stream",
			func() *proxyScript {
				p := start().post(1, "A", "3", "tools/call").post(2, "B", "4", "tools/call")
				e := wire.Event{Type: wire.EventReceived, Dir: "c2s", Kind: "request", ID: "4", Method: "ping", Exchange: 1}
				e.SetRaw([]byte(`{"jsonrpc":"2.0","id":4,"method":"ping"}`))
				p.add(e)
				return p.answered(1, "4").answered(1, "3")
			}(), ""},
		{"a session whose DELETE went by is owed nothing",
			start().post(1, "A", "3", "tools/call").post(2, "B", "7", "tools/call").deleted(3, "B").answered(1, "7"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStreams()
			for _, e := range tc.p.events {
				s.Add(e)
			}
			fs := s.Findings()
			switch {
			case tc.want == "" && len(fs) > 0:
				t.Errorf("findings %v, want none", fs)
			case tc.want != "" && (len(fs) != 1 || !strings.Contains(fs[0].Message, tc.want) || fs[0].Scenario != "proxy" || fs[0].Seed != 3 || len(fs[0].Evidence) != 3):
				t.Errorf("findings %+v, want one saying %q, of the transcript's scenario and seed, with the three events", fs, tc.want)
			}
		})
	}
	// A proxy that runs for days keeps what is open, not what went by.
	s := NewStreams()
	p := start()
	for i := range 3 * maxStreamsOpen {
		ex := int64(i + 1)
		p.events = p.events[:0]
		p.post(ex, "A", "1", "ping")
		if i%2 == 0 {
			p.answered(ex, "1")
		}
		for _, e := range p.events {
			s.Add(e)
		}
	}
	if s.count > maxStreamsOpen || len(s.exchanges) > maxStreamsOpen+1 || len(s.order) > 2*maxStreamsOpen+1 {
		t.Errorf("after %d exchanges: %d open, %d exchanges, %d in order; want each bounded by %d", 3*maxStreamsOpen, s.count, len(s.exchanges), len(s.order), maxStreamsOpen)
	}
}
