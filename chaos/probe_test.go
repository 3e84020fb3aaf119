//go:build unix

package chaos

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/wire"
)

// A liveness probe speaks the session's era, is answered by a live server,
// and its answer never reaches the client.
func TestLivenessProbeIsAnsweredAndSwallowed(t *testing.T) {
	for _, tc := range []struct {
		era, hello, method string
	}{
		{"stateful", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "ping"},
		{"stateless", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, "server/discover"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			inR, inW, _ := os.Pipe()
			outR, outW, _ := os.Pipe()
			rec := NewMemoryRecorder()
			s, err := Start(context.Background(), Config{Command: helperCommand(t, "mcp-server"), Recorder: rec, Probes: true, Grace: 5 * time.Second}, inR, outW)
			if err != nil {
				t.Fatal(err)
			}
			defer outR.Close()
			lines := bufio.NewReader(outR)
			inW.WriteString(tc.hello + "\n")
			first, err := lines.ReadString('\n')
			if err != nil || !strings.Contains(first, `"id":1`) {
				t.Fatalf("no answer to the handshake: %q %v", first, err)
			}
			s.Probe(wire.ToServer, "test")
			deadline := time.Now().Add(5 * time.Second)
			for !probeAnswered(rec.Events()) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			inW.Close()
			rest := readAll(t, lines, 10*time.Second)
			s.Wait()
			if strings.Contains(string(rest), "mcpchaos-probe") {
				t.Errorf("the probe's answer reached the client: %s", rest)
			}
			var got []string
			var answer int64
			for _, e := range rec.Events() {
				switch {
				case strings.HasPrefix(e.ID, wire.ProbeIDPrefix):
					got = append(got, e.Type+" "+e.Dir+" "+e.Method+e.Kind)
					if e.Type == wire.EventReceived {
						answer = e.Seq
					}
				case e.Of == answer && answer != 0:
					got = append(got, e.Type+" "+e.Dir)
				}
			}
			want := []string{"probe c2s " + tc.method, "received s2c response", "dropped s2c"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("probe events (-want +got):\n%s", diff)
			}
		})
	}
}

func probeAnswered(events []wire.Event) bool {
	for _, e := range events {
		if e.Type == wire.EventReceived && strings.HasPrefix(e.ID, wire.ProbeIDPrefix) {
			return true
		}
	}
	return false
}
