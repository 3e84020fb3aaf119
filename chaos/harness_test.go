//go:build unix

package chaos

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// relay is a session under test: the test plays the client through In and Out.
type relay struct {
	In  *os.File // the test writes client frames here
	Out *os.File // the test reads what reached the client here
	Rec *MemoryRecorder

	done   chan struct{}
	result *Result
	err    error
}

// startRelay runs Run in the background with a memory recorder. The test
// must close In (or the server must exit) for it to end; wait collects it.
func startRelay(t *testing.T, cfg Config) *relay {
	t.Helper()
	return startRelayRecorded(t, cfg, NewMemoryRecorder())
}

// startRelayRecorded is startRelay with rec as the recorder; nil records
// nothing, which is a session of its own kind (see passThrough).
func startRelayRecorded(t *testing.T, cfg Config, rec *MemoryRecorder) *relay {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{In: inW, Out: outR, Rec: rec, done: make(chan struct{})}
	if rec != nil {
		cfg.Recorder = rec
	}
	if cfg.Grace == 0 {
		cfg.Grace = 5 * time.Second
	}
	go func() {
		defer close(r.done)
		r.result, r.err = Run(context.Background(), cfg, inR, outW)
	}()
	t.Cleanup(func() {
		if t.Failed() && r.Rec != nil {
			for _, e := range r.Rec.Events() {
				line, _ := e.MarshalLine()
				t.Logf("transcript: %s", bytes.TrimSpace(truncate(line, 300)))
			}
		}
		inW.Close()
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			t.Errorf("relay did not end within 20s of the client closing")
		}
		outR.Close()
	})
	return r
}

// wait returns the session's result, failing the test after timeout.
func (r *relay) wait(t *testing.T, timeout time.Duration) *Result {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(timeout):
		t.Fatalf("relay did not end within %s", timeout)
	}
	if r.err != nil {
		t.Fatalf("Run: %v", r.err)
	}
	return r.result
}

func mustPlan(t *testing.T, seed uint64, specs ...string) *faults.Plan {
	t.Helper()
	var fs []*faults.Fault
	for _, s := range specs {
		f, err := faults.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	return faults.NewPlan(seed, fs)
}

// eventsOf filters a transcript by type.
func eventsOf(events []wire.Event, typ string) []wire.Event {
	var out []wire.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// checkNoGoroutineLeak fails the test if goroutines started during it are
// still running once it ends, allowing a moment for them to wind down.
func checkNoGoroutineLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("%d goroutines leaked:\n%s", n-before, relevantStacks(string(buf)))
		}
	})
}

func relevantStacks(all string) string {
	var keep []string
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, "mcpchaos") && !strings.Contains(g, "checkNoGoroutineLeak") {
			keep = append(keep, g)
		}
	}
	return strings.Join(keep, "\n\n")
}

// readAll reads r to its end or fails after timeout.
func readAll(t *testing.T, r io.Reader, timeout time.Duration) []byte {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(r)
		ch <- result{b, err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			t.Fatalf("reading: %v", res.err)
		}
		return res.b
	case <-time.After(timeout):
		t.Fatalf("reading did not finish within %s", timeout)
	}
	return nil
}

// processAlive reports whether pid exists (and is not a zombie we reaped).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// Field 3 is the state; Z is a zombie awaiting its parent.
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return append(b[:n:n], "..."...)
	}
	return b
}
