package faults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The composition rule of the package documentation, which both transports
// carry out through Fate.
func TestFateComposesInPlanOrder(t *testing.T) {
	held := &Hold{Until: UntilNext}
	inj := Injection{Raw: []byte("x\n")}
	var f Fate
	f.Add("duplicate#1", Effect{Copies: 1})
	f.Add("corrupt#1", Effect{Replace: []byte("bad\n")})
	f.Add("drop#1", Effect{Drop: true}) // sealed already: recorded, changes nothing
	f.Add("corrupt#2", Effect{Replace: []byte("worse\n")})
	f.Add("id-type#1", Effect{Rewrite: []byte("r1\n")})
	f.Add("id-type#2", Effect{Rewrite: []byte("r2\n")})
	f.Add("duplicate#2", Effect{Copies: 2})
	f.Add("reorder#1", Effect{Hold: held})
	f.Add("burst#1", Effect{InjectAfter: []Injection{inj}})
	want := Fate{Replace: []byte("bad\n"), ReplaceBy: "corrupt#1", Rewrite: []byte("r1\n"), RewriteBy: "id-type#1",
		Copies: 3, Hold: held, HoldBy: "reorder#1", After: []LabelledInjection{{"burst#1", inj}}}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("fate (-want +got):\n%s", diff)
	}
	if !f.Decided() {
		t.Error("a replaced message's fate is not sealed")
	}
	var d Fate
	d.Add("drop#1", Effect{Drop: true})
	d.Add("corrupt#1", Effect{Replace: []byte("bad\n")})
	if d.Dropped != "dropped by fault drop#1" || d.ReplaceBy != "" {
		t.Errorf("drop first: %+v", d)
	}
}
