package faults

import "testing"

func TestScenarioSessions(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   Scenario
		want int
	}{
		{"one", Scenario{Faults: []string{"eof:on=c2s:request"}}, 1},
		{"its workload's", Scenario{Workload: Workload{Sessions: 3}}, 3},
		{"a fault confined to session 1 needs a witness", Scenario{Faults: []string{"eof:on=c2s:request,session=1"}}, 2},
		{"the highest named", Scenario{Faults: []string{"eof:session=1", "drop:session=4"}}, 4},
		{"the workload decides", Scenario{Faults: []string{"eof:session=2"}, Workload: Workload{Sessions: 5}}, 5},
	} {
		if got := tc.sc.Sessions(); got != tc.want {
			t.Errorf("%s: Sessions() = %d, want %d", tc.name, got, tc.want)
		}
	}
	sc := Scenario{Name: "x", Faults: []string{"eof:session=3"}, Workload: Workload{Sessions: 2}}
	parsed, err := sc.Parse()
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.CheckSessions(parsed); err == nil {
		t.Errorf("session=3 of a scenario of 2 sessions: no error")
	}
	if got := SessionFaults(parsed, 1); len(got) != 0 {
		t.Errorf("session 1 got %d faults of session 3's", len(got))
	}
	if SessionSeed(7, 1) != 7 || SessionSeed(7, 2) == 7 || SessionSeed(7, 2) == SessionSeed(7, 3) {
		t.Errorf("SessionSeed: session 1 keeps the seed, the others draw their own")
	}
}

// A session's plan names the scenario's seed, which every session's record
// carries and the repro replays, and draws from its own.
func TestPlanInSession(t *testing.T) {
	f, err := Parse("eof")
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(7, []*Fault{f}, InSession(2))
	if p.Seed() != 7 || p.drawSeed != SessionSeed(7, 2) {
		t.Errorf("InSession(2): Seed %d, draws from %d; want 7, and %d", p.Seed(), p.drawSeed, SessionSeed(7, 2))
	}
	if q := NewPlan(7, []*Fault{f}, InSession(1)); q.drawSeed != 7 {
		t.Errorf("session 1 draws from %d, want the scenario's seed", q.drawSeed)
	}
}
