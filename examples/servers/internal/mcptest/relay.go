//go:build unix

package mcptest

import (
	"bufio"
	"context"
	"os"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// Relay is an example server behind mcpchaos's relay with a fault plan, and
// a scripted client on the relay's other side: a test drives it line by
// line and judges the transcript, as mcpchaos does.
type Relay struct {
	t     *testing.T
	in    *os.File // the client's output, the relay's input
	lines chan string
	rec   *chaos.MemoryRecorder
	s     *chaos.Session
}

// StartRelay runs the example server (args as for Start) behind the relay
// with the fault specs, seed 1 and the request deadline the judge uses.
func StartRelay(t *testing.T, specs []string, deadline time.Duration, args ...string) *Relay {
	t.Helper()
	command, env, err := Command(args...)
	if err != nil {
		t.Fatal(err)
	}
	var fs []*faults.Fault
	for _, spec := range specs {
		f, err := faults.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &Relay{t: t, in: inW, lines: make(chan string, 64), rec: chaos.NewMemoryRecorder()}
	r.s, err = chaos.Start(context.Background(), chaos.Config{Command: command, Env: env, Plan: faults.NewPlan(1, fs),
		Recorder: r.rec, Deadline: deadline, Grace: 2 * time.Second, Role: "server"}, inR, outW)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		// However the test ends, the session and the reader end with it:
		// the relay closes the client's input once the server has exited.
		r.End()
		for range r.lines {
		}
		outR.Close()
	})
	return r
}

// Send writes one line (a newline is added) as the client.
func (r *Relay) Send(line string) {
	r.t.Helper()
	r.in.SetWriteDeadline(time.Now().Add(Wait))
	if _, err := r.in.WriteString(line + "\n"); err != nil {
		r.t.Fatalf("writing to the relay: %v", err)
	}
}

// Next returns the next line the client got, failing after Wait.
func (r *Relay) Next() string {
	r.t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			r.t.Fatal("the relay closed the client's input")
		}
		return l
	case <-time.After(Wait):
		r.t.Fatalf("nothing reached the client within %v", Wait)
	}
	return ""
}

// Waiting returns the lines that reached the client and were not read yet.
func (r *Relay) Waiting() []string {
	var out []string
	for len(r.lines) > 0 {
		out = append(out, <-r.lines)
	}
	return out
}

// Open initializes a stateful session.
func (r *Relay) Open() {
	r.t.Helper()
	r.Send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcptest","version":"1"}}}`)
	r.Next()
	r.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// AwaitForwarded waits until the relay has forwarded the client's request
// with id (JSON text) to the server, failing after Wait.
func (r *Relay) AwaitForwarded(id string) {
	r.t.Helper()
	for give := time.Now().Add(Wait); ; time.Sleep(5 * time.Millisecond) {
		seqs := map[int64]bool{}
		for _, e := range r.rec.Events() {
			switch {
			case e.Type == wire.EventReceived && e.Dir == "c2s" && e.Kind == "request" && e.ID == id:
				seqs[e.Seq] = true
			case e.Type == wire.EventForwarded && seqs[e.Of]:
				return
			}
		}
		if time.Now().After(give) {
			r.t.Fatalf("the relay did not forward request %s within %v", id, Wait)
		}
	}
}

// End closes the client's output, waits for the session to end and returns
// its transcript.
func (r *Relay) End() []wire.Event {
	r.in.Close()
	r.s.Wait()
	return r.rec.Events()
}
