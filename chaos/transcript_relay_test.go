//go:build unix

package chaos

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// The relay tests need a unix child (main_test.go), so this one lives apart
// from the recorder's own tests.

// Recorded to a file, as wrap --transcript records, every frame of either
// direction reads back byte for byte, received and then forwarded, however
// it was stored: with the frames of its read, or in pieces of a line over
// the cap.
func TestTranscriptFileHoldsEveryFrame(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxLine int
	}{{"default cap", 0}, {"lines over a small cap pass in pieces", 1000}} {
		t.Run(tc.name, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			var file bytes.Buffer
			rec := NewJSONLRecorder(&file)
			r := startRelayRecorded(t, Config{Command: helperCommand(t, "cat"), Recorder: rec, MaxLine: tc.maxLine, Grace: 15 * time.Second}, nil)
			in := arbitraryFrames(5, 300)
			go func() {
				r.In.Write(in)
				r.In.Close()
			}()
			out := readAll(t, r.Out, 20*time.Second)
			r.wait(t, 20*time.Second)
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(in, out) {
				t.Fatalf("relayed bytes differ at %d", firstDiff(in, out))
			}
			if !bytes.Contains(file.Bytes(), []byte(`"frames":`)) {
				t.Fatal("no frame is stored as it came")
			}
			got := map[string][]byte{}
			received := map[int64]bool{}
			err := wire.ReadTranscript(&file, func(e wire.Event) error {
				switch e.Type {
				case wire.EventReceived:
					b, err := e.Bytes()
					if err != nil {
						return err
					}
					got[e.Dir] = append(got[e.Dir], b...)
					received[e.Seq] = true
				case wire.EventForwarded:
					if !received[e.Of] {
						return fmt.Errorf("event %d forwards %d, which was not received before it", e.Seq, e.Of)
					}
					delete(received, e.Of)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, dir := range []string{"c2s", "s2c"} {
				if !bytes.Equal(in, got[dir]) {
					t.Errorf("%s: the transcript holds %d bytes of %d; first difference at %d", dir, len(got[dir]), len(in), firstDiff(in, got[dir]))
				}
			}
			if len(received) != 0 {
				t.Errorf("%d frames received and never forwarded", len(received))
			}
		})
	}
}
