package judge

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// synth generates a long session one event at a time, so that a transcript
// of a million events never has to be held: per cycle, the client calls a
// tool with a progress token, the server reports progress, logs a line to
// stderr and a notifications/message, and answers the call made openTarget
// cycles ago, so that a few hundred requests are always open (and the
// first few hundred stay open: the one hang finding). Every 1000
// cycles a liveness probe goes out and is answered. The frames are real
// MCP frames, so the protocol checks do their full work on them.
type synth struct {
	seq, t   int64
	next     int          // next request number
	answered int          // requests answered so far
	cycle    []wire.Event // the events of the current cycle, from pos on
	pos      int
	ids      []string
	total    int
	emitted  int
}

const openTarget = 300

var (
	synthCall     = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"weather in Lyon"},"_meta":{"progressToken":1}}}` + "\n"
	synthProgress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5,"total":1}}` + "\n"
	synthResult   = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"21°C, light rain, wind 12 km/h from the south-west"}],"isError":false}}` + "\n"
	synthLog      = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"search","data":"cache miss"}}` + "\n"
	synthStderr   = "INFO:mcp.server.lowlevel.server:Processing request of type CallToolRequest\n"
	synthPing     = `{"jsonrpc":"2.0","id":"mcpchaos-probe-1","method":"ping"}` + "\n"
	synthPong     = `{"jsonrpc":"2.0","id":"mcpchaos-probe-1","result":{}}` + "\n"
)

func newSynth(total int) *synth {
	s := &synth{total: total}
	// Ids are made before the clock starts: the benchmark measures the
	// judge, not strconv.
	for i := 0; i < total/4+openTarget; i++ {
		s.ids = append(s.ids, strconv.Itoa(i))
	}
	seed := uint64(1)
	s.push(wire.Event{Type: wire.EventSession, Seed: &seed, Scenario: "synthetic", Role: "server", DeadlineMS: 5000, GraceMS: 3000})
	s.push(wire.Event{Type: wire.EventProcessStarted, PID: 1})
	return s
}

func (s *synth) push(e wire.Event) {
	s.seq++
	s.t += 100 // 10,000 events a second
	e.Seq, e.T = s.seq, s.t
	s.cycle = append(s.cycle, e)
}

func (s *synth) frame(dir, kind, id, method, raw string) int64 {
	s.push(wire.Event{Type: wire.EventReceived, Dir: dir, Kind: kind, ID: id, Method: method, Raw: raw, Size: len(raw), Era: "stateful"})
	return s.seq
}

// fill writes the next events into buf and returns how many; 0 at the end.
func (s *synth) fill(buf []wire.Event) int {
	n := 0
	for n < len(buf) {
		if s.pos == len(s.cycle) {
			if s.emitted >= s.total {
				return n
			}
			s.makeCycle()
		}
		k := copy(buf[n:], s.cycle[s.pos:])
		s.pos += k
		if s.pos == len(s.cycle) {
			s.cycle, s.pos = s.cycle[:0], 0
		}
		n += k
		s.emitted += k
	}
	return n
}

func (s *synth) makeCycle() {
	s.cycle, s.pos = s.cycle[:0], 0
	if left := s.total - s.emitted; left <= 12 { // a cycle is at most 12 events
		for range left - 1 {
			s.push(wire.Event{Type: wire.EventStderr, Raw: synthStderr, Size: len(synthStderr)})
		}
		s.push(wire.Event{Type: wire.EventSessionEnd, Detail: "the client closed its output"})
		return
	}
	id := s.ids[s.next]
	r := s.frame("c2s", "request", id, "tools/call", synthCall)
	s.next++
	s.push(wire.Event{Type: wire.EventForwarded, Dir: "c2s", Of: r})
	p := s.frame("s2c", "notification", "", "notifications/progress", synthProgress)
	s.push(wire.Event{Type: wire.EventForwarded, Dir: "s2c", Of: p})
	s.push(wire.Event{Type: wire.EventStderr, Raw: synthStderr, Size: len(synthStderr)})
	l := s.frame("s2c", "notification", "", "notifications/message", synthLog)
	s.push(wire.Event{Type: wire.EventForwarded, Dir: "s2c", Of: l})
	// The first openTarget calls are never answered (the hangs the verdict
	// must find); after them, each call is answered openTarget cycles
	// later.
	if s.next-s.answered > 2*openTarget {
		a := s.frame("s2c", "response", s.ids[s.answered+openTarget], "", synthResult)
		s.answered++
		s.push(wire.Event{Type: wire.EventForwarded, Dir: "s2c", Of: a})
	}
	if s.next%1000 == 0 {
		s.push(wire.Event{Type: wire.EventProbe, Dir: "c2s", ID: `"mcpchaos-probe-` + strconv.Itoa(s.next) + `"`, Method: "ping", Raw: synthPing})
		pong := s.frame("s2c", "response", `"mcpchaos-probe-`+strconv.Itoa(s.next)+`"`, "", synthPong)
		s.push(wire.Event{Type: wire.EventDropped, Dir: "s2c", Of: pong})
	}
}

// judgeSynth judges a synthetic session of n events and returns the judge
// (before Verdict, for memory measurements) and the number of events.
// Making the events is left out of timer's measurement.
func judgeSynth(n int, timer interface {
	StopTimer()
	StartTimer()
}) (*Judger, int) {
	s := newSynth(n)
	buf := make([]wire.Event, 8192)
	j := New()
	count := 0
	for {
		if timer != nil {
			timer.StopTimer()
		}
		k := s.fill(buf)
		if timer != nil {
			timer.StartTimer()
		}
		if k == 0 {
			break
		}
		for i := range buf[:k] {
			j.add(&buf[i])
		}
		count += k
	}
	return j, count
}

// BenchmarkJudge1M judges a million-event session. Generating the events is
// not timed; ns/event and allocs/event are the judge's alone.
func BenchmarkJudge1M(b *testing.B) {
	b.ReportAllocs()
	var events int
	for b.Loop() {
		j, n := judgeSynth(1_000_000, b)
		v := j.Verdict()
		if len(v.Findings) != 1 || v.Findings[0].Kind != reports.KindHang {
			b.Fatalf("findings %v, want the one hang of the requests left open", shorten(v.Findings))
		}
		events = n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
}

// TestJudgeScalesLinearly judges 100k and 1M events: time must grow about
// tenfold (within a generous factor) and the judge's memory must not grow
// with the transcript, only with what is open.
func TestJudgeScalesLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("judges 1.1M events")
	}
	small, large := 100_000, 1_000_000
	if raceEnabled {
		small, large = 10_000, 100_000 // the race detector is ~10x slower
	}
	measure := func(n int) (time.Duration, uint64) {
		best := time.Duration(1 << 62)
		var heap uint64
		for range 3 {
			runtime.GC()
			start := time.Now()
			j, got := judgeSynth(n, nil)
			d := time.Since(start)
			if got != n {
				t.Fatalf("generated %d events, want %d", got, n)
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
			runtime.KeepAlive(j)
			best = min(best, d)
		}
		return best, heap
	}
	ts, hs := measure(small)
	tl, hl := measure(large)
	ratio := float64(tl) / float64(ts)
	t.Logf("%d events: %v (%.0f ns/event), heap %d KiB; %d events: %v (%.0f ns/event), heap %d KiB; time ratio %.1f",
		small, ts, float64(ts.Nanoseconds())/float64(small), hs>>10, large, tl, float64(tl.Nanoseconds())/float64(large), hl>>10, ratio)
	if ratio > 30 {
		t.Errorf("judging %d events took %.1f times as long as %d: not linear", large, ratio, small)
	}
	// The answered-id ring fills up to its cap between the two sizes; past
	// that, nothing grows with the event count.
	if hl > hs+24<<20 {
		t.Errorf("heap after %d events is %d KiB, after %d it was %d KiB: the judge keeps per-event state", large, hl>>10, small, hs>>10)
	}
	if !raceEnabled && tl > 5*time.Second {
		t.Errorf("judging %d events took %v, want under 5s", large, tl)
	}
}

func TestSynthIsWellFormed(t *testing.T) {
	j, n := judgeSynth(100_000, nil)
	v := j.Verdict()
	if n != 100_000 {
		t.Fatalf("generated %d events", n)
	}
	want := fmt.Sprintf("%d tools/call requests", openTarget)
	if len(v.Findings) != 1 || v.Findings[0].Kind != reports.KindHang || v.Findings[0].Message[:len(want)] != want {
		t.Errorf("findings %v, want one hang of the %d requests left open", shorten(v.Findings), openTarget)
	}
}
