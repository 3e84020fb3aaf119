package explore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

// stateVersion is the format of a state file; another is refused.
const stateVersion = 1

// State is what a search did, kept in a file (--state) so that a later
// search of the same target, seed and shard goes on where it stopped: on CI
// runners whose jobs have a time limit, each job resumes the last one's
// search instead of starting over. It holds the search's runs and what
// they found, shrunk.
type State struct {
	Version int `json:"version"`
	// Key names the search: a state of another target, seed, shard or
	// baseline is refused rather than mixed in.
	Key  string     `json:"key"`
	Runs []StateRun `json:"runs"`
	// Combinations is the index of the next combination to draw.
	Combinations int          `json:"combinations"`
	Groups       []StateGroup `json:"groups"`
}

// StateRun is one run of the search (not of shrinking).
type StateRun struct {
	Phase      string   `json:"phase"`
	Plan       []Fault  `json:"plan"`
	Fired      bool     `json:"fired"`
	Landed     bool     `json:"landed"`
	Signatures []string `json:"signatures,omitempty"`
}

// StateGroup is a group found and shrunk, with the run that shows it.
type StateGroup struct {
	Signature    string                 `json:"signature"`
	First        []Fault                `json:"first"`
	Minimal      []Fault                `json:"minimal"`
	SkipTools    []string               `json:"skip_tools,omitempty"`
	FoundAfterMS int64                  `json:"found_after_ms"`
	FoundBy      int                    `json:"found_by"`
	Reproduced   int                    `json:"reproduced"`
	Tries        int                    `json:"tries"`
	ShrinkRuns   int                    `json:"shrink_runs"`
	Cut          bool                   `json:"cut,omitempty"`
	Result       reports.ScenarioResult `json:"result"`
	Findings     []reports.Finding      `json:"findings"`
}

// StateKey names a search for its state file: the target, the seed, the
// shard and the fault points the baseline gave (a server that changed
// gives other points, and its old runs say nothing of it).
func StateKey(target reports.Target, seed uint64, shard *Shard, points []Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d; command %q; url %s", seed, target.Command, target.URL)
	if shard != nil {
		fmt.Fprintf(&b, "; shard %d/%d", shard.K, shard.N)
	}
	fmt.Fprintf(&b, "; %d points", len(points))
	return reports.ShardRun(seed, target, []string{b.String()}, len(points))
}

// ReadState reads a state file; a file that does not exist is no state.
func ReadState(path, key string) (*State, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the state file: %w", err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s is not an explore state file: %v", path, err)
	}
	switch {
	case st.Version != stateVersion:
		return nil, fmt.Errorf("%s is an explore state of format %d; this mcpchaos reads %d", path, st.Version, stateVersion)
	case st.Key != key:
		return nil, fmt.Errorf("%s is the state of another search (another target, seed, shard, or a baseline that gave other fault points); remove it to start over, or give the seed and shard it was made with", path)
	}
	return &st, nil
}

// WriteState writes st to path atomically: a job killed while writing
// leaves the last whole state.
func WriteState(path string, st *State) error {
	data, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".explore-state-*")
	if err != nil {
		return fmt.Errorf("writing the state file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing the state file: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// state is the search's state as it stands; called under s.mu.
func (s *search) stateLocked() *State {
	st := &State{Version: stateVersion, Key: s.o.StateKey, Combinations: s.combos, Runs: []StateRun{}, Groups: []StateGroup{}}
	for _, r := range s.res.Runs {
		if (r.Phase == PhaseSystematic || r.Phase == PhaseCombination) && r.Result.Name != "" {
			st.Runs = append(st.Runs, StateRun{Phase: r.Phase, Plan: r.Plan, Fired: r.Fired, Landed: r.Landed, Signatures: r.Signatures})
		}
	}
	for _, g := range s.res.Groups {
		if g.Minimal == nil { // not shrunk yet: a resumed search finds it again
			continue
		}
		st.Groups = append(st.Groups, StateGroup{
			Signature: g.Signature, First: g.First, Minimal: g.Minimal, SkipTools: g.SkipTools,
			FoundAfterMS: g.FoundAfter.Milliseconds(), FoundBy: g.FoundBy,
			Reproduced: g.Reproduced, Tries: g.Tries, ShrinkRuns: g.ShrinkRuns, Cut: g.Cut,
			Result: g.Trial.Result, Findings: g.Trial.Findings,
		})
	}
	return st
}

// save hands the state to Options.Save, if set.
func (s *search) save() error {
	if s.o.Save == nil {
		return nil
	}
	s.mu.Lock()
	st := s.stateLocked()
	s.mu.Unlock()
	return s.o.Save(st)
}

// resume takes an earlier search's runs and groups: its runs are not made
// again, its groups are not shrunk again.
func (s *search) resume(st *State) {
	for _, r := range st.Runs {
		s.res.Runs = append(s.res.Runs, Run{Phase: r.Phase, Plan: r.Plan, Fired: r.Fired, Landed: r.Landed,
			Signatures: r.Signatures, Result: reports.ScenarioResult{Name: "resumed"}})
		if r.Phase == PhaseSystematic && len(r.Plan) == 1 {
			s.resumed[r.Plan[0].Spec()] = len(s.res.Runs) - 1
		}
		s.res.Resumed++
	}
	s.combos = st.Combinations
	for _, sg := range st.Groups {
		g := &Group{Signature: sg.Signature, First: sg.First, Minimal: sg.Minimal, SkipTools: sg.SkipTools,
			FoundAfter: time.Duration(sg.FoundAfterMS) * time.Millisecond, FoundBy: sg.FoundBy,
			Reproduced: sg.Reproduced, Tries: sg.Tries, ShrinkRuns: sg.ShrinkRuns, Cut: sg.Cut,
			Trial: suite.Trial{Result: sg.Result, Findings: sg.Findings}, Resumed: true}
		s.groups[g.Signature] = g
		s.res.Groups = append(s.res.Groups, g)
	}
	// A group the earlier search found but had not shrunk when it stopped
	// is shrunk by this one, from the plan that found it first.
	for _, r := range st.Runs {
		for _, sig := range r.Signatures {
			if g := s.groups[sig]; g != nil {
				if !g.Resumed {
					g.FoundBy++
				}
				continue
			}
			g := &Group{Signature: sig, First: r.Plan, FoundBy: 1}
			s.groups[sig] = g
			s.res.Groups = append(s.res.Groups, g)
		}
	}
}
