package machine

import (
	"math"
	"testing"
	"time"
)

// A clock counting at a quarter of a core counts a quarter of the wall
// time; one without a share counts wall time; Reset starts again.
func TestClockCountsTheShareOfACore(t *testing.T) {
	quarter := NewClock(func() float64 { return 0.25 })
	wall := NewClock(nil)
	time.Sleep(200 * time.Millisecond)
	q, w := quarter.Tick(), wall.Tick()
	if w < 200*time.Millisecond {
		t.Errorf("wall clock counted %v of 200ms", w)
	}
	if q < 45*time.Millisecond || q > w/3 {
		t.Errorf("quarter clock counted %v while the wall clock counted %v, want a quarter", q, w)
	}
	quarter.Reset()
	if got := quarter.Tick(); got > 10*time.Millisecond {
		t.Errorf("after Reset the clock counted %v", got)
	}
}

func TestWindowBusy(t *testing.T) {
	var s CPUSample
	read := func() (CPUSample, bool) {
		s.Total += 100
		s.Idle += 40
		return s, true
	}
	w := StartWindow(read)
	if busy, ok := w.Busy(); !ok || busy < 0.59 || busy > 0.61 {
		t.Errorf("Busy() = %v, %v; want 0.6", busy, ok)
	}
	if _, ok := StartWindow(func() (CPUSample, bool) { return CPUSample{}, false }).Busy(); ok {
		t.Error("a window without counters claims to know the load")
	}
}

// The sampler starts at a whole core, reports changes only, and its
// goroutine is gone once Stop returns.
func TestSamplerStops(t *testing.T) {
	var changes []float64
	s := StartSampler(func(share float64) { changes = append(changes, share) })
	if got := s.Share(); got <= 0 || got > 1 {
		t.Errorf("Share() = %v", got)
	}
	time.Sleep(3 * sampleEvery)
	s.Stop()
	s.Stop() // twice is harmless
	n := len(changes)
	time.Sleep(2 * sampleEvery)
	if len(changes) != n {
		t.Error("changed was called after Stop returned")
	}
	for i := 1; i < len(changes); i++ {
		if changes[i] == changes[i-1] {
			t.Errorf("a change to the same share: %v", changes)
		}
	}
}

func TestQuantize(t *testing.T) {
	for in, want := range map[float64]float64{1: 1, 0.66: 0.65, 0.333: 0.35, 0.01: 0.05, 0.97: 0.95, 0.99: 1} {
		if got := quantize(in); math.Abs(got-want) > 1e-9 {
			t.Errorf("quantize(%v) = %v, want %v", in, got, want)
		}
	}
}
