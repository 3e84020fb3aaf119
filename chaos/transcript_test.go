package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// slowWriter takes its time over every write and fails the test if two
// writes overlap: the recorder writes outside its main lock.
type slowWriter struct {
	t       *testing.T
	busy    atomic.Bool
	mu      sync.Mutex
	out     bytes.Buffer
	writes  int
	failAt  int // the write that fails, counting from 1; 0 never
	failure error
}

func (w *slowWriter) Write(p []byte) (int, error) {
	if w.busy.Swap(true) {
		w.t.Error("two writes to the transcript at once")
	}
	defer w.busy.Store(false)
	time.Sleep(50 * time.Microsecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.writes == w.failAt {
		return 0, w.failure
	}
	return w.out.Write(p)
}

// Several goroutines record at once, some frames longer than the buffer,
// into a writer slower than they are: every line comes out whole, in seq
// order, each goroutine's events in the order it recorded them.
func TestJSONLRecorderKeepsOrderAcrossConcurrentRecorders(t *testing.T) {
	w := &slowWriter{t: t}
	r := NewJSONLRecorder(w)
	const writers, each = 4, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				size := 200
				if i%500 == 7 {
					size = flushSize + 1000 // written from where it was encoded
				}
				e := wire.Event{Type: wire.EventReceived, Dir: "c2s", PID: g + 1, Of: int64(i + 1)}
				e.SetRaw([]byte(strings.Repeat("x", size) + "\n"))
				if g%2 == 1 {
					// The relay's pair: the forwarded event right after.
					r.RecordPair(e, wire.Event{Type: wire.EventForwarded, Dir: "c2s", PID: g + 1})
					continue
				}
				r.Record(e)
			}
		}()
	}
	wg.Wait()
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&w.out)
	sc.Buffer(nil, 2*flushSize)
	var seq, lastT int64
	var prev wire.Event
	next := make(map[int]int64)
	for sc.Scan() {
		var e wire.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is not an event: %v", seq+1, err)
		}
		seq++
		if e.Seq != seq || e.T < lastT {
			t.Fatalf("line %d has seq %d at %d µs after %d µs: out of order", seq, e.Seq, e.T, lastT)
		}
		lastT = e.T
		if e.Type == wire.EventForwarded {
			if e.Of != prev.Seq || e.PID != prev.PID || e.T != prev.T || prev.Type != wire.EventReceived {
				t.Fatalf("line %d: forwarded event %+v does not follow its received event %+v", seq, e, prev)
			}
		} else if next[e.PID]++; e.Of != next[e.PID] {
			t.Fatalf("recorder %d's event %d came as its %dth", e.PID, e.Of, next[e.PID])
		}
		prev = e
	}
	if want := int64(writers*each + writers/2*each); seq != want {
		t.Errorf("%d events in the transcript; want %d", seq, want)
	}
}

// A write error does not stop recording, and Flush reports the first one.
func TestJSONLRecorderReportsTheFirstWriteError(t *testing.T) {
	disk := errors.New("no space left on device")
	w := &slowWriter{t: t, failAt: 1, failure: disk}
	r := NewJSONLRecorder(w)
	e := wire.Event{Type: wire.EventReceived, Dir: "c2s"}
	e.SetRaw([]byte(strings.Repeat("y", flushSize) + "\n"))
	r.Record(e)
	r.Record(e)
	if err := r.Flush(); !errors.Is(err, disk) {
		t.Fatalf("Flush = %v; want the write's error", err)
	}
	if w.writes < 2 {
		t.Errorf("%d writes; recording must go on after a failed one", w.writes)
	}
}
