//go:build unix

package chaos

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/wire"
)

// servedEvents renders a served server's record as "type detail" lines; the
// stdout and stderr lines come from two pipes read apart, so their order
// is not compared.
func servedEvents(events []wire.Event) []string {
	var out []string
	for _, e := range events {
		switch e.Type {
		case wire.EventStderr:
			b, _ := e.Bytes()
			out = append(out, strings.Join(strings.Fields("log "+e.Pipe+" "+string(b)), " "))
		case wire.EventSignal:
			if e.Detail != wire.GroupCleanupDetail {
				out = append(out, "signal "+e.Signal)
			}
		case wire.EventProcessExited:
			out = append(out, "exited "+e.Signal)
		default:
			out = append(out, e.Type)
		}
	}
	return out
}

// A served (HTTP) server is stopped with SIGTERM, and SIGKILL when it
// ignores that; the signals, both its output streams and its exit are in
// the record.
func TestServedStop(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         []string
	}{
		{"exits on SIGTERM", `echo up >&2; exec sleep 30`,
			[]string{"process-started", "log up", "signal SIGTERM", "exited SIGTERM"}},
		{"ignores SIGTERM", `trap '' TERM; echo listening; while :; do sleep 0.05; done`,
			[]string{"process-started", "log server-stdout listening", "signal SIGTERM", "signal SIGKILL", "exited SIGKILL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := NewMemoryRecorder()
			s, err := StartServed(ServedConfig{Command: []string{"sh", "-c", tc.script}, Recorder: rec, Grace: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // the script's first line
			start := time.Now()
			s.Stop("the test ended")
			s.Stop("again: nothing happens")
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("Stop took %v", d)
			}
			if diff := cmp.Diff(tc.want, servedEvents(rec.Events())); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})
	}
}

// A served server that dies on its own has its exit recorded when it
// dies, after the crash's output, not when the session stops it: the judge
// must know that the requests sent after went to a dead server.
func TestServedExitIsRecordedWhenItHappens(t *testing.T) {
	checkNoGoroutineLeak(t)
	rec := NewMemoryRecorder()
	s, err := StartServed(ServedConfig{Command: []string{"sh", "-c", `sleep 0.1; echo 'panic: boom' >&2; exit 2`}, Recorder: rec, Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	deadline := time.Now().Add(3 * time.Second)
	for !slices.Contains(servedEvents(rec.Events()), "exited ") {
		if time.Now().After(deadline) {
			t.Fatalf("no exit recorded 3s after the server exited: %q", servedEvents(rec.Events()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Stop("the test ended")
	want := []string{"process-started", "log panic: boom", "exited "}
	if diff := cmp.Diff(want, servedEvents(rec.Events())); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	for _, e := range rec.Events() {
		if e.Type == wire.EventProcessExited && (e.ExitCode == nil || *e.ExitCode != 2 || e.ByUs) {
			t.Errorf("exit %+v; want status 2, not by us", e)
		}
	}
}

func TestServedWaitListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	freeAddr := free.Addr().String()
	free.Close()

	sleeper, err := StartServed(ServedConfig{Command: []string{"sleep", "30"}, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sleeper.Stop("the test ended")
	if err := sleeper.WaitListening(context.Background(), ln.Addr().String(), time.Second); err != nil {
		t.Errorf("listening address: %v", err)
	}
	err = sleeper.WaitListening(context.Background(), freeAddr, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "nothing listened on "+freeAddr+" within 300ms") {
		t.Errorf("nobody listening: %v", err)
	}

	// The run's time running out is not the server's failure to listen.
	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = sleeper.WaitListening(short, freeAddr, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "the run ended while waiting for the server to listen") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the run's deadline: %v", err)
	}

	quitter, err := StartServed(ServedConfig{Command: []string{"sh", "-c", "exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	defer quitter.Stop("the test ended")
	start := time.Now()
	err = quitter.WaitListening(context.Background(), freeAddr, 10*time.Second)
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "status 3") || time.Since(start) > 3*time.Second {
		t.Errorf("a server that exits: %v after %v", err, time.Since(start))
	}
}
