package faults

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/wire"
)

// fuzzTraffic is a short conversation a parsed fault is run over, so that the
// fuzzer also reaches triggers and actions with odd parameters.
var fuzzTraffic = []frame{
	request(c2s, "0", "initialize", ""),
	response(s2c, "0"),
	notif(c2s, "notifications/initialized"),
	request(c2s, "1", "tools/call", `"t1"`),
	request(c2s, "2", "tools/call", ""),
	progress(s2c, `"t1"`),
	request(s2c, "1", "sampling/createMessage", "9"),
	response(c2s, "1"),
	response(s2c, "1"),
	errorAnswer(s2c, "2"),
	notif(s2c, "notifications/tools/list_changed"),
	garbage(c2s),
}

func FuzzParse(f *testing.F) {
	for _, fam := range Families() {
		f.Add(fam.Example)
		f.Add(fam.Name)
	}
	for _, s := range []string{
		"", ":", "stal", "stall:", "stall:,", "stall:for", "stall:for=", "stall:=5s",
		"stall:for=1s,for=2s", "stall:dir=up", "stall:shrink=maybe", "eof:p=NaN", "eof:p=1e-3",
		"eof:nth=0", "eof:every=0", "eof:nth=1,every=2", "burst:count=0", "burst:method=tools/list",
		"burst:on=s2c:response:*,after=c2s:request:initialize,count=3,gap=1ms,method=notifications/message",
		"half-close:dir=c2s,position=before,inflight=2,times=0,every=3",
		"eof:on=foo:bar", "eof:on=s2c::x", "eof:after=*a*a*a*a*a*a*b", "  eof : on = s2c ",
		"stall:for=9223372036854775807ns", "burst:count=99999999999999999999", "eof:times=-0",
		"stall:on=request:s2c", "burst:method=notifications/\"quoted\"", "eof:p=0x1p-1",
		"signal:sig=STOP,for=1ms", "signal:sig=KILL,tool=echo*", "stderr-flood:bytes=1,line=2,block=false",
		"linger:for=1ns", "eof:tool=*", "eof:tool=**a*", `eof:id="3"`, "eof:id=3", "eof:id=abc", `eof:id="\u00`,
		"eof:id=-1e400", "eof:from=1s,until=2s", "eof:until=1ns", "eof:from=2s,until=2s", "drop:id=1,tool=x,from=0s,p=0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fault, err := Parse(spec)
		if err != nil {
			if fault != nil {
				t.Fatalf("Parse(%q) returned both a Fault and %v", spec, err)
			}
			if prefix := fmt.Sprintf("fault %q: ", spec); !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("Parse(%q) error %q does not name the spec", spec, err)
			}
			return
		}
		if fault == nil {
			t.Fatalf("Parse(%q) returned neither a Fault nor an error", spec)
		}
		if fault.Spec != spec {
			t.Fatalf("Parse(%q).Spec = %q", spec, fault.Spec)
		}
		if fam, ok := Lookup(fault.Family.Name); !ok || fam != fault.Family {
			t.Fatalf("Parse(%q).Family is not registered", spec)
		}
		if fault.Action == nil {
			t.Fatalf("Parse(%q).Action is nil", spec)
		}
		tr := fault.Trigger
		if tr.Phase != Before && tr.Phase != After {
			t.Fatalf("Parse(%q): phase %d", spec, tr.Phase)
		}
		if tr.Nth > 0 && tr.Every > 0 {
			t.Fatalf("Parse(%q) accepted nth and every together", spec)
		}
		if tr.HasP && !(tr.P >= 0 && tr.P <= 1) {
			t.Fatalf("Parse(%q) accepted p=%v", spec, tr.P)
		}
		if b, ok := fault.Action.(burst); ok {
			if b.count < 1 || !strings.HasPrefix(b.method, "notifications/") {
				t.Fatalf("Parse(%q) accepted burst %+v", spec, b)
			}
			if b.count > 1000 {
				return // a valid but huge burst: firing it only allocates
			}
		}

		// Run the fault over some traffic: it must not panic, and every
		// firing must be in its phase and say what it did.
		p := NewPlan(1, []*Fault{fault})
		for _, fr := range fuzzTraffic {
			m := wire.Classify([]byte(fr.raw))
			s := p.Receive(fr.dir, &m)
			for _, phase := range []Phase{Before, After} {
				for _, fi := range p.Decide(phase, s) {
					if phase != tr.Phase {
						t.Fatalf("Parse(%q): fired in %v; want %v", spec, phase, tr.Phase)
					}
					if fi.Effect.Detail == "" {
						t.Fatalf("Parse(%q): firing without a Detail", spec)
					}
					for _, inj := range fi.Effect.Inject {
						// Requests are ours only: their answers are swallowed by id.
						m := wire.Classify(inj.Raw)
						if m.Kind != wire.Notification && (m.Kind != wire.Request || !strings.HasPrefix(m.ID, wire.InjectIDPrefix)) {
							t.Fatalf("Parse(%q) injected %q, not a notification or a request with an id of ours", spec, inj.Raw)
						}
					}
				}
			}
		}
	})
}
