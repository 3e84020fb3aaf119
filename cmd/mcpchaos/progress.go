package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/internal/words"
	"github.com/mcpchaos/mcpchaos/suite"
)

// progressLine shows a matrix run as it goes, on stderr: on a terminal one
// live line (what runs, how many are done, findings so far, elapsed),
// redrawn in place; elsewhere (a CI log, a pipe, or CI set) one plain line
// per scenario as it ends, which a log keeps readable.
type progressLine struct {
	w     io.Writer
	live  bool
	total int
	start time.Time

	mu       sync.Mutex
	running  []string
	done     int
	findings int
	stop     chan struct{}
	stopped  chan struct{}
}

// newProgress starts the display of a run of the selected scenarios and the
// baseline, which always starts first (and runs once when it is selected
// too); close ends it before the summary is printed.
func newProgress(w io.Writer, selected []faults.Scenario) *progressLine {
	total := 1
	for _, sc := range selected {
		if sc.Name != faults.Baseline.Name {
			total++
		}
	}
	p := &progressLine{w: w, live: isTerminal(w) && os.Getenv("CI") == "", total: total, start: time.Now()}
	if p.live {
		p.stop, p.stopped = make(chan struct{}), make(chan struct{})
		go p.redraw()
	}
	return p
}

// isTerminal reports whether w is a terminal a live line can be redrawn on.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (p *progressLine) Started(scenario string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = append(p.running, scenario)
}

func (p *progressLine) Finished(scenario, outcome string, findings int, took time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.running, scenario); i >= 0 {
		p.running = slices.Delete(p.running, i, i+1)
	}
	p.done++
	p.findings += findings
	if !p.live {
		fmt.Fprintf(p.w, "mcpchaos: [%d/%d] %s: %s, %d %s, %s; %s\n", p.done, p.total, scenario, outcome,
			findings, words.Plural(findings, "finding", "findings"), took.Round(time.Millisecond), p.tally())
	}
}

// Again starts the count over, for a matrix run again from its baseline,
// and says why.
func (p *progressLine) Again(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running, p.done = nil, 0
	if p.live {
		fmt.Fprintf(p.w, "\r\x1b[K")
	}
	fmt.Fprintf(p.w, "mcpchaos: %s\n", why)
}

// tally is the run so far; the caller holds mu.
func (p *progressLine) tally() string {
	return fmt.Sprintf("%d %s so far, %s elapsed", p.findings, words.Plural(p.findings, "finding", "findings"), time.Since(p.start).Round(100*time.Millisecond))
}

func (p *progressLine) redraw() {
	defer close(p.stopped)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		p.mu.Lock()
		line := fmt.Sprintf("[%d/%d] running %s · %s", p.done, p.total, orNothing(strings.Join(p.running, ", ")), p.tally())
		p.mu.Unlock()
		if len(line) > 150 {
			line = line[:147] + "..."
		}
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
		select {
		case <-p.stop:
			fmt.Fprint(p.w, "\r\x1b[K")
			return
		case <-tick.C:
		}
	}
}

// close ends the display: the live line is erased.
func (p *progressLine) close() {
	if p.live {
		close(p.stop)
		<-p.stopped
	}
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

var _ suite.ProgressAgain = (*progressLine)(nil)
