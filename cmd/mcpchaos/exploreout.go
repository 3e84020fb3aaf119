package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcpchaos/mcpchaos/explore"
	"github.com/mcpchaos/mcpchaos/reports"
)

// exploreProgress is explore's progress line on stderr: redrawn in place on
// a terminal, a line every few seconds elsewhere (a CI log).
type exploreProgress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	last     time.Time
	drawn    bool
	status   explore.Status
}

// logEvery is how often the progress line is written where it cannot be
// redrawn.
const logEvery = 10 * time.Second

func newExploreProgress(w io.Writer) *exploreProgress {
	return &exploreProgress{w: w, terminal: isTerminal(w)}
}

func (p *exploreProgress) update(s explore.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = s
	if !p.terminal && time.Since(p.last) < logEvery {
		return
	}
	p.last = time.Now()
	p.draw()
}

func (p *exploreProgress) draw() {
	s := p.status
	line := fmt.Sprintf("explore: %s, %d run, %d points left, %d skipped by reduction, %d found, %s left",
		s.Phase, s.Ran, s.Left, s.Skipped, s.Found, s.TimeLeft.Round(time.Second))
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.drawn = true
}

func (p *exploreProgress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// exploreScenarioFile is the scenario file format (docs/files.md), as written.
type exploreScenarioFile struct {
	Version   int               `yaml:"version"`
	Scenarios []exploreScenario `yaml:"scenarios"`
}

type exploreScenario struct {
	Name   string   `yaml:"name"`
	Doc    string   `yaml:"doc"`
	Faults []string `yaml:"faults"`
	Seed   uint64   `yaml:"seed"`
}

// writeExploreScenarios writes the smallest plan of each finding as a
// scenario of a scenario file, with the seed it was found with.
func writeExploreScenarios(path string, r *reports.Report, seed uint64) error {
	f := exploreScenarioFile{Version: 1, Scenarios: []exploreScenario{}}
	// One scenario for each smallest plan: the signatures it reproduces
	// share it.
	at := map[string]int{}
	for _, x := range r.Explore.Found {
		found := fmt.Sprintf("%s (reproduced %d of %d runs)", x.Signature, x.Reproduced, x.Tries)
		if i, ok := at[x.Scenario]; ok {
			f.Scenarios[i].Doc = strings.Replace(f.Scenarios[i].Doc, " found ", " found "+found+", ", 1)
			continue
		}
		doc := "mcpchaos explore found " + found
		if len(x.SkipTools) > 0 {
			doc += fmt.Sprintf("; it was shrunk with the tools %s left out of the workload (test --skip-tool)", strings.Join(x.SkipTools, ", "))
		}
		at[x.Scenario] = len(f.Scenarios)
		f.Scenarios = append(f.Scenarios, exploreScenario{Name: x.Scenario, Doc: doc, Faults: x.Minimal, Seed: seed})
	}
	data, err := yaml.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("cannot write the scenario file: %w", err)
	}
	return nil
}
