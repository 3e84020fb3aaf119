package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
				if g%2 == 1 {
					// The relay's pair: the forwarded event right after.
					raw := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"g%d","params":{"t":"%s"}}`+"\n", i+1, g+1, strings.Repeat("x", size))
					r.RecordForwarded(wire.ToServer, raw, 1, r.Now())
					continue
				}
				e := wire.Event{Type: wire.EventReceived, Dir: "c2s", PID: g + 1, Of: int64(i + 1)}
				e.SetRaw([]byte(strings.Repeat("x", size) + "\n"))
				r.Record(e)
			}
		}()
	}
	wg.Wait()
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	var events []wire.Event
	if err := wire.ReadTranscript(&w.out, func(e wire.Event) error { events = append(events, e); return nil }); err != nil {
		t.Fatalf("the transcript does not read back: %v", err)
	}
	var seq, lastT int64
	var prev wire.Event
	next := make(map[int]int64)
	for _, e := range events {
		seq++
		if e.Seq != seq || e.T < lastT {
			t.Fatalf("line %d has seq %d at %d µs after %d µs: out of order", seq, e.Seq, e.T, lastT)
		}
		lastT = e.T
		switch {
		case e.Type == wire.EventForwarded:
			if e.Of != prev.Seq || e.Dir != prev.Dir || e.T != prev.T || prev.Method == "" {
				t.Fatalf("line %d: forwarded event %+v does not follow its received event %+v", seq, e, prev)
			}
		case e.Method != "":
			g, _ := strconv.Atoi(strings.TrimPrefix(e.Method, "g"))
			if next[g]++; e.ID != strconv.FormatInt(next[g], 10) {
				t.Fatalf("recorder %d's frame %s came as its %dth", g, e.ID, next[g])
			}
		default:
			if next[e.PID]++; e.Of != next[e.PID] {
				t.Fatalf("recorder %d's event %d came as its %dth", e.PID, e.Of, next[e.PID])
			}
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

// wrap --report judges the events OnEvent hands it while the session runs,
// and mcpchaos judge the lines read back: both must be the same events,
// including those of the relay's pairs, which are encoded without an Event.
func TestOnEventSeesWhatTheTranscriptHolds(t *testing.T) {
	var out bytes.Buffer
	r := NewJSONLRecorder(&out)
	var seen []wire.Event
	r.OnEvent = func(e wire.Event) { seen = append(seen, e) }
	r.Record(wire.Event{Type: wire.EventSession, Command: []string{"cat"}})
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"p"}}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"result":{"t":"é \"quoted\""}}` + "\r\n",
		"not json\n",
		"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"t\":\"\xff\"}}\n",
	} {
		// Classified, as under a plan, and unread, as with none.
		m := wire.Classify([]byte(frame))
		seq := r.RecordForwarded(wire.ToClient, m.Raw, 1, r.Now())
		r.Record(wire.Event{Type: wire.EventDropped, Dir: "s2c", Of: seq, Detail: "after the pair"})
		seq = r.RecordForwarded(wire.ToClient, []byte(frame), 1, r.Now())
		r.Record(wire.Event{Type: wire.EventDropped, Dir: "s2c", Of: seq, Detail: "after the pair"})
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	var back []wire.Event
	if err := wire.ReadTranscript(&out, func(e wire.Event) error { back = append(back, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(back) != 25 {
		t.Errorf("%d events in the transcript; want 25", len(back))
	}
	if diff := cmp.Diff(seen, back); diff != "" {
		t.Errorf("events (-OnEvent +transcript):\n%s", diff)
	}
}
