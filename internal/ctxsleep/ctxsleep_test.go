package ctxsleep

import (
	"context"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), 0) || !Sleep(context.Background(), time.Millisecond) {
		t.Error("a wait that ran out reported false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if Sleep(ctx, time.Hour) {
		t.Error("a wait cut short by its context reported true")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("an ended context still waited %v", d)
	}
}
