package suite

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

func writeEvents(t *testing.T, path string, events ...wire.Event) {
	t.Helper()
	var b strings.Builder
	for i, e := range events {
		e.Seq = int64(i + 1)
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The CPU sampler may record before the session event: mcpchaos judge
// must read such a transcript (it refused the explore transcripts of
// mcp-server-time and server-sequential-thinking), and still refuse a
// file that is no transcript.
func TestRejudgeReadsACPUShareBeforeTheSession(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.jsonl")
	writeEvents(t, ok,
		wire.Event{Type: wire.EventCPUShare, T: 100, CPUShare: 500},
		wire.Event{Type: wire.EventSession, T: 200, Scenario: "late-session", Role: "server", Command: []string{"srv"}},
		wire.Event{Type: wire.EventSessionEnd, T: 1_000_200, Detail: "the client ended its session"},
	)
	report, err := Rejudge([]string{ok}, reports.Tool{})
	if err != nil {
		t.Fatalf("Rejudge: %v", err)
	}
	if len(report.Scenarios) != 1 || report.Scenarios[0].Name != "late-session" {
		t.Errorf("scenarios %+v, want late-session", report.Scenarios)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	writeEvents(t, bad, wire.Event{Type: wire.EventCPUShare, T: 100, CPUShare: 500}, wire.Event{Type: wire.EventStderr, T: 200})
	if _, err := Rejudge([]string{bad}, reports.Tool{}); err == nil || !strings.Contains(err.Error(), "does not start with a session event") {
		t.Errorf("Rejudge of a file with no session event: %v, want it refused", err)
	}
}
