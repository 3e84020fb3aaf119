//go:build unix

package chaos

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// Clients often SIGKILL their server (mcpchaos wrap) a few milliseconds after
// their last call. With FlushEvery running, a whole exchange is in the
// transcript file as soon as the relay waits for the next frame, long
// before FlushEvery's own interval (an hour here) comes round.
func TestTranscriptIsOnDiskWhenTheRelayWaits(t *testing.T) {
	checkNoGoroutineLeak(t)
	path := filepath.Join(t.TempDir(), "t.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec := NewJSONLRecorder(f)
	stop := rec.FlushEvery(time.Hour)
	defer stop()

	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := Run(context.Background(), Config{Command: helperCommand(t, "cat"), Recorder: rec, Grace: 5 * time.Second}, inR, outW); err != nil {
			t.Error(err)
		}
	}()
	defer func() {
		inW.Close()
		<-done
		outR.Close()
	}()
	const msg = `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	if _, err := inW.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(outR).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// received and forwarded, each way: four events besides the start.
	deadline := time.Now().Add(2 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		forwarded := 0
		_ = wire.ReadTranscript(bytes.NewReader(data), func(e wire.Event) error {
			if e.Type == wire.EventForwarded {
				forwarded++
			}
			return nil
		})
		if forwarded == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exchange is not on disk 2s after it ended; the file holds:\n%s", data)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
