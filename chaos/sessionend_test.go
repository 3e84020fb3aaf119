//go:build unix

package chaos

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// The shutdown ladder, a STOP's resume and a linger's end act on a session
// from the side. The session's end waits for them, and none starts after
// it, so nothing is recorded after the session-end event (the ladder once
// recorded server-stdin closed after it, racing wrap --report's judge under
// CI load).
func TestTheSessionEndWaitsForItsBackgroundWork(t *testing.T) {
	s := &session{done: make(chan struct{})}
	release := make(chan struct{})
	s.goBackground(func() { <-release })
	ended := make(chan struct{})
	go func() {
		s.endBackground()
		close(ended)
	}()
	select {
	case <-ended:
		t.Fatal("the session ended while a background goroutine still ran")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not end once its background goroutine returned")
	}
	var ran atomic.Bool
	s.goBackground(func() { ran.Store(true) })
	s.shutdown("too late")
	time.Sleep(20 * time.Millisecond)
	if ran.Load() {
		t.Error("a background goroutine started after the session ended")
	}
}

// lateReader gives its line, then holds its end of file until released: a
// client input the session cannot close under its pump.
type lateReader struct {
	line    []byte
	release chan struct{}
}

func (r *lateReader) Read(p []byte) (int, error) {
	if len(r.line) > 0 {
		n := copy(p, r.line)
		r.line = r.line[n:]
		return n, nil
	}
	<-r.release
	return 0, io.EOF
}

// TestWrapReport failed under CI load: the server exited before the client
// pump read its input's end, the session ended without it (a plain reader
// cannot be closed), and the pump's late "end of file" reached wrap
// --report's judge while the verdict was being read. After StopEvents the
// judge hears nothing more, and the transcript still gets the event.
func TestALateClientEndReachesTheTranscriptButNotTheJudge(t *testing.T) {
	checkNoGoroutineLeak(t)
	var out bytes.Buffer
	rec := NewJSONLRecorder(&out)
	var seen []wire.Event // unguarded: a late OnEvent is a race
	rec.OnEvent = func(e wire.Event) { seen = append(seen, e) }
	in := &lateReader{line: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"), release: make(chan struct{})}
	s, err := Start(context.Background(), Config{Command: helperCommand(t, "exit", `{"jsonrpc":"2.0","id":1,"result":{}}`), Recorder: rec, Grace: 2 * time.Second}, in, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end when its server exited")
	}
	rec.StopEvents()
	close(in.release)
	time.Sleep(100 * time.Millisecond) // the pump records its end
	judged := len(seen)
	if last := seen[judged-1]; last.Type != wire.EventSessionEnd {
		t.Errorf("the judge's last event is %s, want %s", last.Type, wire.EventSessionEnd)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"pipe":"client-stdin"`) {
		t.Errorf("the client's late end of file is not in the transcript:\n%s", out.String())
	}
}
