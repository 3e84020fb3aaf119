package suite

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpchaos/mcpchaos/internal/machine"
	"github.com/mcpchaos/mcpchaos/internal/words"
)

const (
	// autoPerCore is how many runs go at once per core when the user
	// leaves the choice to mcpchaos. A run mostly waits: on deadlines,
	// on the shutdown ladder's grace, on a server's timers (the default
	// matrix on server-everything keeps 2 cores 16% busy with 8 runs at
	// once), so several share a core without slowing one another.
	autoPerCore = 4
	// autoPerCoreHTTP is autoPerCore for the HTTP matrix with a port for
	// each run ({port}): its 13 scenarios and baseline waited in two
	// waves at 4 a core. All 14 at once of server-everything over
	// streamable HTTP kept 2 cores 30% busy (7.5 s of CPU in 15.8 s) and
	// found what one at a time finds; a busy machine lowers it as any.
	autoPerCoreHTTP = 8
	// maxPerCore bounds what a user may ask for: past it, the runs'
	// start-ups alone (a Node or Python interpreter each) keep the cores
	// busy, and a handler slowed by its neighbours looks hung.
	maxPerCore = 16
	// runMemory is what one run is allowed for its target: a Node or
	// Python server with its interpreter takes 50 to 150 MB.
	runMemory = 256 << 20
	// busyThreshold is the share of the machine's CPU time in use above
	// which a run counts as made on a busy machine: its handlers and its
	// exit may then have been slowed by its neighbours rather than by
	// themselves.
	busyThreshold = 0.85
)

// host is what sizes a matrix: its cores and the memory it has free.
type host struct {
	cores    int
	memFree  uint64
	memKnown bool
}

func thisHost() host {
	free, ok := machine.MemAvailable()
	return host{cores: machine.Cores(), memFree: free, memKnown: ok}
}

// holds is the most runs the machine takes at once.
func (mc host) holds() int {
	n := maxPerCore * mc.cores
	if mc.memKnown {
		n = min(n, int(mc.memFree/runMemory))
	}
	return max(n, 1)
}

func (mc host) String() string {
	s := fmt.Sprintf("%d %s", mc.cores, words.Plural(mc.cores, "core", "cores"))
	if mc.memKnown {
		s += fmt.Sprintf(", %.1f GB free at %d MB a run", float64(mc.memFree)/1e9, runMemory>>20)
	}
	return s
}

// sizeParallel says how many of a matrix's runs (the baseline among them)
// go at once. asked is --parallel, 0 to let the machine decide: as many
// as the cores take (autoPerCore each) and the memory, never more than
// there are runs. What the user asked for is capped at what the machine
// holds, and note says so.
func sizeParallel(asked, runs int, mc host) (n int, note string) {
	return sizeParallelPer(asked, runs, autoPerCore, mc)
}

// sizeParallelPer is sizeParallel with perCore runs a core when the
// machine decides.
func sizeParallelPer(asked, runs, perCore int, mc host) (n int, note string) {
	if asked == 0 {
		return max(1, min(runs, perCore*mc.cores, mc.holds())), ""
	}
	if h := mc.holds(); asked > h && h < runs {
		return h, fmt.Sprintf("--parallel %d is more runs at once than this machine holds (%s): %d ran at once", asked, mc, h)
	}
	return max(1, min(asked, runs)), ""
}

// limiter lets at most limit runs go at once; the limit can be lowered
// while runs go (a busy machine, a target that takes one session at a
// time), which holds back the runs not yet started.
type limiter struct {
	mu      sync.Mutex
	limit   int
	running int
	waiting int
	freed   chan struct{} // closed and replaced whenever a slot may be free
}

func newLimiter(n int) *limiter {
	return &limiter{limit: max(n, 1), freed: make(chan struct{})}
}

// acquire waits for a slot; false if ctx ended first.
func (l *limiter) acquire(ctx context.Context) bool {
	for {
		l.mu.Lock()
		if l.running < l.limit {
			l.running++
			l.mu.Unlock()
			return true
		}
		freed := l.freed
		l.waiting++
		l.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
		}
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
		if ctx.Err() != nil {
			return false
		}
	}
}

func (l *limiter) release() {
	l.mu.Lock()
	l.running--
	close(l.freed)
	l.freed = make(chan struct{})
	l.mu.Unlock()
}

// lower sets the limit to n if that is lower, and reports whether it was
// and some run waits for a slot: whether lowering it holds anything back.
func (l *limiter) lower(n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n >= l.limit {
		return false
	}
	l.limit = max(n, 1)
	return l.waiting > 0
}
