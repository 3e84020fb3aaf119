package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/wire"
)

// A transcript written the current way (format 3: frames stored as they
// came, after a line that stands for their events) is judged again offline
// to the verdict the live run gave (wrap --report), and to the verdict of
// the same session written the way format 2 wrote it (every event one JSON
// line, frames as message, raw or raw_b64 members), which mcpchaos still
// reads.
func TestRejudgingGivesTheLiveVerdictInEitherFormat(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":7}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`,
		`{"jsonrpc":"2.0","id":99,"result":{}}`,
		"not json",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"t\":\"\xff\"}}",
		`{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\r",
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}`,
	}, "\n") + "\n"
	for _, tc := range []struct {
		name   string
		faults []string
	}{
		// No plan: the frames of one read are stored as one run, unread.
		{"nothing reads the frames", nil},
		// A plan reads each frame; each is stored on its own.
		{"a plan", []string{"--fault", "drop:on=c2s:request:tools/call,nth=2", "--fault", "duplicate:on=s2c:request:ping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			current, old := filepath.Join(dir, "current.jsonl"), filepath.Join(dir, "format2.jsonl")
			live := filepath.Join(dir, "live.json")
			args := append([]string{"wrap", "-q", "--seed", "3", "--transcript", current, "--report", live}, tc.faults...)
			args = append(append(args, "--"), catServer(t)...)
			stdinR, stdinW, _ := os.Pipe()
			stdoutR, stdoutW, _ := os.Pipe()
			go func() {
				stdinW.WriteString(in)
				stdinW.Close()
			}()
			code := make(chan int, 1)
			var stderr bytes.Buffer
			go func() { code <- run(args, stdinR, stdoutW, &stderr) }()
			io.Copy(io.Discard, stdoutR)
			if c := <-code; c != exitOK && c != exitFindings {
				t.Fatalf("wrap: exit %d, stderr %q", c, stderr.String())
			}

			data, err := os.ReadFile(current)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, []byte(`"bytes":`)) {
				t.Fatalf("the transcript stores no frame as it came:\n%s", data)
			}
			var format2 bytes.Buffer
			for _, e := range readTranscript(t, current) {
				if e.Type == wire.EventSession {
					e.Format = 2
				}
				format2.Write(e.AppendLine(nil))
			}
			if err := os.WriteFile(old, format2.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}

			want := verdictOf(t, readReportFile(t, live))
			if len(want.Findings) == 0 {
				t.Fatal("the live run found nothing: the comparison would be vacuous")
			}
			for _, path := range []string{current, old} {
				out := filepath.Join(dir, filepath.Base(path)+".report.json")
				var stdout, stderr bytes.Buffer
				if c := run([]string{"judge", "--report", out, path}, nil, &stdout, &stderr); c != exitOK && c != exitFindings {
					t.Fatalf("judge %s: exit %d, stderr %q", filepath.Base(path), c, stderr.String())
				}
				if diff := cmp.Diff(want, verdictOf(t, readReportFile(t, out))); diff != "" {
					t.Errorf("judging %s again (-live +offline):\n%s", filepath.Base(path), diff)
				}
			}
		})
	}
}

// verdict is what a report says of its one scenario, less where and how
// long it ran.
type verdict struct {
	Outcome  string
	Findings []reports.Finding
	Notes    []string
}

func verdictOf(t *testing.T, r *reports.Report) verdict {
	t.Helper()
	if len(r.Scenarios) != 1 {
		t.Fatalf("%d scenarios in the report; want 1", len(r.Scenarios))
	}
	return verdict{Outcome: r.Outcome, Findings: r.Findings, Notes: r.Scenarios[0].Notes}
}
