package faults

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPresetScenariosParse(t *testing.T) {
	names := map[string]bool{}
	for _, s := range append(ServerScenarios(), ClientScenarios()...) {
		if s.Name == "" || s.Doc == "" || len(s.Faults) == 0 {
			t.Errorf("scenario %+v lacks a name, a doc or faults", s)
		}
		if names[s.Name] {
			t.Errorf("scenario %s is listed twice", s.Name)
		}
		names[s.Name] = true
		if _, err := s.Parse(); err != nil {
			t.Error(err)
		}
	}
}

func TestSelectScenarios(t *testing.T) {
	got, err := SelectScenarios(ServerScenarios(), []string{"eof-inflight", "stall-s2c", "eof-inflight"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"eof-inflight", "stall-s2c"}, names); diff != "" {
		t.Errorf("selected (-want +got):\n%s", diff)
	}
	_, err = SelectScenarios(ServerScenarios(), []string{"eof-inflght"})
	if err == nil || !strings.Contains(err.Error(), `unknown scenario "eof-inflght" (did you mean "eof-inflight"?)`) {
		t.Errorf("err = %v, want an unknown-scenario error with a suggestion", err)
	}
}
