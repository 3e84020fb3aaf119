package machine

import (
	"math"
	"sync"
	"time"
)

// Sampler follows the share of a core a process that wants the CPU gets
// for the length of one run: smoothed over about a second, so that one busy
// instant does not count as a busy machine, in steps of 5%, and changed by
// two steps at least (or back to a whole core), so that a run records a
// handful of changes rather than one a sample.
// Share reads it; changed hears of every change, for the transcript.
type Sampler struct {
	mu    sync.Mutex
	share float64
	stop  chan struct{}
	done  chan struct{}
}

// sampleEvery is how often a Sampler reads the kernel's count of threads
// ready to run.
const sampleEvery = 100 * time.Millisecond

// StartSampler starts following the share; changed (which may be nil) is
// called from the sampler's goroutine with each new value. Stop ends it.
// Where the share cannot be read, it stays 1 and no goroutine runs.
func StartSampler(changed func(share float64)) *Sampler {
	s := &Sampler{share: 1, stop: make(chan struct{}), done: make(chan struct{})}
	if _, ok := runnable(); !ok {
		close(s.done)
		return s
	}
	go s.follow(changed)
	return s
}

func (s *Sampler) follow(changed func(share float64)) {
	defer close(s.done)
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	cores := float64(Cores())
	avg := 0.0
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		n, ok := runnable()
		if !ok {
			continue
		}
		// An average over about ten samples: a second.
		if avg == 0 {
			avg = float64(n)
		}
		avg += 0.2 * (float64(n) - avg)
		share := quantize(min(1, cores/max(avg, 1)))
		s.mu.Lock()
		was := s.share
		// A change of one step is noise around a step's edge: it would
		// fill the transcript with events that change no verdict.
		if math.Abs(share-was) < 2*shareStep-1e-9 && share != 1 {
			share = was
		}
		s.share = share
		s.mu.Unlock()
		if share != was && changed != nil {
			changed(share)
		}
	}
}

// shareStep is the step a share is rounded to.
const shareStep = 0.05

// quantize rounds a share to shareStep, never below one step.
func quantize(share float64) float64 {
	return max(shareStep, math.Round(share/shareStep)*shareStep)
}

// Share is the share of a core a process that wants the CPU gets now.
func (s *Sampler) Share() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.share
}

// Stop ends the sampling and waits for its goroutine; changed is not
// called after it returns.
func (s *Sampler) Stop() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}
