package faults

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var paramTypes = map[ParamType]bool{
	TypeInt: true, TypeFloat: true, TypeDuration: true, TypeBool: true,
	TypeString: true, TypePattern: true, TypeDirection: true, TypeChoice: true, TypeSize: true,
}

// checkParam checks what `mcpchaos faults` prints about a parameter and that
// its default and the value the missing-value error suggests are accepted.
func checkParam(t *testing.T, p Param) {
	t.Helper()
	if p.Name == "" || strings.ContainsAny(p.Name, ":,= ") {
		t.Errorf("parameter name %q is empty or cannot be written in a spec", p.Name)
	}
	if p.Doc == "" {
		t.Errorf("%s: no Doc", p.Name)
	}
	if !paramTypes[p.Type] {
		t.Errorf("%s: unknown type %q", p.Name, p.Type)
	}
	if (p.Type == TypeChoice) != (len(p.Choices) > 0) {
		t.Errorf("%s: type %s with choices %v", p.Name, p.Type, p.Choices)
	}
	if p.Default != "" {
		if err := p.check(p.Default); err != nil {
			t.Errorf("%s: default %q is not valid: %v", p.Name, p.Default, err)
		}
	}
	if err := p.check(exampleValue(p)); err != nil {
		t.Errorf("%s: the suggested value %q in the missing-value error is not valid: %v", p.Name, exampleValue(p), err)
	}
	if u := p.Usage(); !strings.HasPrefix(u, p.Name+"=") || !strings.HasSuffix(u, p.Doc) {
		t.Errorf("%s: Usage() = %q", p.Name, u)
	}
}

// TestFamilies walks the registry `mcpchaos faults` prints, so that the
// listing cannot rot: every family is documented, its example parses into
// itself, and every parameter is documented with a valid default.
func TestFamilies(t *testing.T) {
	fams := Families()
	if len(fams) == 0 {
		t.Fatal("no families")
	}
	triggerNames := map[string]bool{}
	for _, p := range TriggerParams() {
		triggerNames[p.Name] = true
	}
	seen := map[string]bool{}
	for _, fam := range fams {
		t.Run(fam.Name, func(t *testing.T) {
			if fam.Name == "" || strings.ContainsAny(fam.Name, ":,= ") {
				t.Fatalf("family name %q is empty or cannot be written in a spec", fam.Name)
			}
			if seen[fam.Name] {
				t.Errorf("family %s is listed twice", fam.Name)
			}
			seen[fam.Name] = true
			if got, ok := Lookup(fam.Name); !ok || got != fam {
				t.Errorf("Lookup(%q) does not find the family", fam.Name)
			}
			if fam.Doc == "" {
				t.Error("no Doc")
			}
			if fam.Phase != Before && fam.Phase != After {
				t.Errorf("Phase = %d; want Before or After", fam.Phase)
			}
			if fam.New == nil {
				t.Fatal("no New")
			}

			if !strings.HasPrefix(fam.Example, fam.Name+":") && fam.Example != fam.Name {
				t.Errorf("Example %q does not start with the family name", fam.Example)
			}
			f, err := Parse(fam.Example)
			if err != nil {
				t.Fatalf("Example does not parse: %v", err)
			}
			if f.Family != fam {
				t.Errorf("Example parses as %s", f.Family.Name)
			}

			// The family with only defaults must parse: defaults agree with New.
			if _, err := Parse(fam.Name); err != nil {
				t.Errorf("Parse(%q) with every default: %v", fam.Name, err)
			}

			names := map[string]bool{}
			for _, p := range fam.Params {
				checkParam(t, p)
				if names[p.Name] || triggerNames[p.Name] {
					t.Errorf("parameter %s is declared twice or shadows a trigger key", p.Name)
				}
				names[p.Name] = true
				// A default written out must mean the same as leaving it out.
				if p.Default != "" {
					spec := fam.Name + ":" + p.Name + "=" + p.Default
					explicit, err := Parse(spec)
					if err != nil {
						t.Errorf("Parse(%q): %v", spec, err)
						continue
					}
					implicit := mustParse(t, fam.Name)[0]
					if diff := cmp.Diff(implicit.Action, explicit.Action, cmpOpts); diff != "" {
						t.Errorf("%s differs from the default (-implicit +explicit):\n%s", spec, diff)
					}
				}
			}
			// Every key the family accepts can be given the suggested value.
			for _, p := range append(TriggerParams(), fam.Params...) {
				spec := fam.Name + ":" + p.Name + "=" + exampleValue(p)
				if _, err := Parse(spec); err != nil {
					t.Errorf("Parse(%q) with the value the missing-value error suggests: %v", spec, err)
				}
			}
		})
	}
}

func TestTriggerParams(t *testing.T) {
	names := map[string]bool{}
	var got []string
	for _, p := range TriggerParams() {
		t.Run(p.Name, func(t *testing.T) { checkParam(t, p) })
		if names[p.Name] {
			t.Errorf("trigger key %s is declared twice", p.Name)
		}
		names[p.Name] = true
		got = append(got, p.Name)
	}
	// The keys Parse's doc comment promises.
	want := []string{"on", "after", "nth", "every", "times", "p", "inflight", "position", "tool", "id", "from", "until", "session"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trigger keys (-want +got):\n%s", diff)
	}
}

func TestLookupUnknown(t *testing.T) {
	for _, name := range []string{"", "STALL", "stall ", "nope"} {
		if f, ok := Lookup(name); ok || f != nil {
			t.Errorf("Lookup(%q) = %v, %v; want nothing", name, f, ok)
		}
	}
}
