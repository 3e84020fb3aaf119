//go:build unix

package chaos

import (
	"sync/atomic"
	"testing"
	"time"
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
