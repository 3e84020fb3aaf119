package suite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// test --url -- CMD stops the server once its client has hung up: the
// probe's streams are closed, and the proxy's to the server with them,
// before the SIGTERM (http-shutdown-needed-sigkill holds a server to
// exiting with its clients gone). On the legacy transport the probe closes
// its stream once every request it sent is answered; it used to wait 2 s
// for an end of output that never came, and its stream went with the
// SIGTERM.
func TestHTTPServerIsStoppedWithItsClientGone(t *testing.T) {
	for _, path := range []string{"/mcp", "/sse"} {
		t.Run(path, func(t *testing.T) {
			u, server := httpServed(t)
			u.Path = path
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			report, err := Run(ctx, Options{Command: server, URL: u, Scenarios: []faults.Scenario{faults.Baseline},
				Seed: 1, Deadline: 5 * time.Second, Grace: 2 * time.Second, TranscriptDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Findings) > 0 {
				t.Errorf("findings: %+v", report.Findings)
			}
			f, err := os.Open(filepath.Join(dir, "baseline.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var lastMessage, sigterm int64 // µs
			var endsAfter []string
			err = wire.ReadTranscript(f, func(e wire.Event) error {
				switch {
				case e.Type == wire.EventReceived:
					lastMessage = e.T
				case e.Type == wire.EventSignal && e.Signal == "SIGTERM":
					sigterm = e.T
				case e.Type == wire.EventHTTP && sigterm > 0 && strings.HasPrefix(e.Detail, "stream ended"):
					endsAfter = append(endsAfter, e.Detail)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if sigterm == 0 {
				t.Fatal("no SIGTERM in the transcript")
			}
			if len(endsAfter) > 0 {
				t.Errorf("streams ended after the SIGTERM: %q", endsAfter)
			}
			if gap := time.Duration(sigterm-lastMessage) * time.Microsecond; gap > time.Second {
				t.Errorf("SIGTERM %v after the last message; want the server stopped as soon as its client is gone", gap)
			}
		})
	}
}
