// Package ctxsleep is a wait that a context cuts short: the HTTP proxy's
// delays and gaps and the HTTP client's reconnection backoff both need one.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits d, or less if ctx ends first; it reports whether the wait ran
// out (true at once for d <= 0).
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
