//go:build unix

package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// arbitraryFrames makes frames of every shape a peer may send: JSON-RPC,
// CRLF, invalid UTF-8, non-JSON, empty lines, multi-megabyte lines, and a
// final line without its newline.
func arbitraryFrames(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		switch r.IntN(8) {
		case 0:
			b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"echo"}}` + "\n")
		case 1:
			b.WriteString(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}` + "\r\n")
		case 2:
			junk := make([]byte, r.IntN(300))
			for j := range junk {
				junk[j] = byte(r.IntN(256))
				if junk[j] == '\n' {
					junk[j] = 0xff
				}
			}
			b.Write(junk)
			b.WriteByte('\n')
		case 3:
			b.WriteString("\n")
		case 4:
			b.WriteString(`{"jsonrpc":"2.0","id":"x` + strconv.Itoa(i) + `","result":{"content":[{"type":"text","text":"` + strings.Repeat("é", r.IntN(40000)) + `"}]}}` + "\n")
		case 5:
			b.WriteString("not json at all {\n")
		case 6:
			if r.IntN(6) == 0 {
				b.WriteString(`{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 3<<20) + `"}` + "\n")
			}
		case 7:
			b.WriteString(`  {"jsonrpc": "1.0", "id": null, "error": {"code": -1}}  ` + "\n")
		}
	}
	b.WriteString(`{"jsonrpc":"2.0","method":"unterminated"}`)
	return b.Bytes()
}

// The relay's first promise: with no fault firing, both directions carry
// exactly the bytes that were sent, whatever they are.
func TestRelayIsByteExact(t *testing.T) {
	for _, tc := range []struct {
		name    string
		seed    uint64
		maxLine int
	}{
		{name: "default cap", seed: 1},
		{name: "another seed", seed: 2},
		{name: "lines over a small cap pass in pieces", seed: 3, maxLine: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			in := arbitraryFrames(tc.seed, 300)
			r := startRelay(t, Config{Command: helperCommand(t, "cat"), MaxLine: tc.maxLine, Grace: 15 * time.Second})
			go func() {
				r.In.Write(in)
				r.In.Close()
			}()
			out := readAll(t, r.Out, 20*time.Second)
			res := r.wait(t, 20*time.Second)
			if !bytes.Equal(in, out) {
				t.Fatalf("relayed bytes differ: sent %d bytes, got %d; first difference at %d", len(in), len(out), firstDiff(in, out))
			}
			if res.ExitCode == nil || *res.ExitCode != 0 {
				t.Errorf("server exit = %v %q, want code 0", res.ExitCode, res.Signal)
			}
			// Every received frame is in the transcript with its exact bytes,
			// so the record of each direction reassembles the input.
			for _, dir := range []string{"c2s", "s2c"} {
				var got []byte
				for _, e := range eventsOf(r.Rec.Events(), wire.EventReceived) {
					if e.Dir == dir {
						b, err := e.Bytes()
						if err != nil {
							t.Fatal(err)
						}
						got = append(got, b...)
					}
				}
				if !bytes.Equal(in, got) {
					t.Errorf("%s transcript does not hold the exact bytes: %d recorded of %d", dir, len(got), len(in))
				}
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestClassificationIsRecorded(t *testing.T) {
	r := startRelay(t, Config{Command: helperCommand(t, "cat")})
	r.In.Write([]byte(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		"garbage\n"))
	r.In.Close()
	readAll(t, r.Out, 10*time.Second)
	r.wait(t, 10*time.Second)

	type row struct{ Dir, Kind, ID, Method, Era string }
	var got []row
	for _, e := range eventsOf(r.Rec.Events(), wire.EventReceived) {
		if e.Dir == "c2s" {
			got = append(got, row{e.Dir, e.Kind, e.ID, e.Method, e.Era})
		}
	}
	want := []row{
		{"c2s", "request", "7", "initialize", "stateful"},
		{"c2s", "notification", "", "notifications/initialized", "stateful"},
		{"c2s", "invalid", "", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("received events (-want +got):\n%s", diff)
	}
}

// A server that ignores its stdin closing and SIGTERM is still gone when Run
// returns: the ladder ends with SIGKILL to its process group.
func TestShutdownLadderEscalatesToSIGKILL(t *testing.T) {
	checkNoGoroutineLeak(t)
	grace := 300 * time.Millisecond
	r := startRelay(t, Config{Command: helperCommand(t, "stubborn"), Grace: grace})
	readLine(t, r.Out) // the server is up and has ignored SIGTERM
	start := time.Now()
	r.In.Close()
	res := r.wait(t, 10*time.Second)
	took := time.Since(start)

	if res.Signal != "SIGKILL" || !res.SignalledByUs {
		t.Errorf("result = %+v, want killed by our SIGKILL", res)
	}
	if took < 2*grace {
		t.Errorf("ended after %s, before two grace periods of %s", took, grace)
	}
	var got []string
	for _, e := range r.Rec.Events() {
		switch e.Type {
		case wire.EventPipeClosed:
			if e.Pipe == wire.PipeClientOutput {
				continue // closed when the server's output ends, which races its exit
			}
			got = append(got, e.Type+" "+e.Pipe)
		case wire.EventSignal:
			got = append(got, e.Type+" "+e.Signal)
		case wire.EventProcessExited:
			got = append(got, e.Type+" "+e.Signal)
		}
	}
	want := []string{
		"pipe-closed client-stdin",
		"pipe-closed server-stdin",
		"signal SIGTERM",
		"signal SIGKILL",
		"pipe-closed server-stdout",
		"process-exited SIGKILL",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lifecycle events (-want +got):\n%s", diff)
	}
}

func TestShutdownLadderStopsAtSIGTERMWhenThatSuffices(t *testing.T) {
	r := startRelay(t, Config{Command: helperCommand(t, "term-exits"), Grace: 200 * time.Millisecond})
	r.In.Close()
	res := r.wait(t, 10*time.Second)
	if res.Signal != "SIGTERM" {
		t.Errorf("result = %+v, want ended by SIGTERM", res)
	}
	if n := len(eventsOf(r.Rec.Events(), wire.EventSignal)); n != 1 {
		t.Errorf("sent %d signals, want only SIGTERM", n)
	}
}

// When the server exits first, the client sees its output end, stderr is
// recorded, and no process of the server's group survives.
func TestServerExitingFirstEndsTheSession(t *testing.T) {
	checkNoGoroutineLeak(t)
	t.Setenv("EXIT", "3")
	r := startRelay(t, Config{Command: helperCommand(t, "exit", `{"jsonrpc":"2.0","id":1,"result":{}}`)})
	out := readAll(t, r.Out, 10*time.Second) // EOF: we closed the client's input
	res := r.wait(t, 10*time.Second)
	if want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"; string(out) != want {
		t.Errorf("client got %q, want %q", out, want)
	}
	if res.ExitCode == nil || *res.ExitCode != 3 {
		t.Errorf("exit = %+v, want code 3", res)
	}
	stderr := eventsOf(r.Rec.Events(), wire.EventStderr)
	if len(stderr) != 1 || stderr[0].Raw != "exiting now\n" {
		t.Errorf("stderr events = %+v, want the one line", stderr)
	}
}

func TestGrandchildrenDoNotOutliveTheSession(t *testing.T) {
	r := startRelay(t, Config{Command: helperCommand(t, "grandchild")})
	line := readLine(t, r.Out)
	r.wait(t, 10*time.Second)
	var msg struct {
		Params struct{ Data int } `json:"params"`
	}
	if err := json.Unmarshal(line, &msg); err != nil || msg.Params.Data == 0 {
		t.Fatalf("no grandchild pid in %q: %v", line, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(msg.Params.Data) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if processAlive(msg.Params.Data) {
		t.Errorf("grandchild %d is still running after the session", msg.Params.Data)
	}
}

// A server that only writes to stderr must never block on it.
func TestStderrIsDrained(t *testing.T) {
	r := startRelay(t, Config{Command: helperCommand(t, "stderr-flood")})
	r.wait(t, 10*time.Second)
	if n := len(eventsOf(r.Rec.Events(), wire.EventStderr)); n != 20000 {
		t.Errorf("recorded %d stderr lines, want 20000", n)
	}
}

func TestMissingCommandIsAStartError(t *testing.T) {
	_, err := Run(t.Context(), Config{Command: []string{"mcpchaos-no-such-command"}}, strings.NewReader(""), &bytes.Buffer{})
	var se *StartError
	if err == nil || !asStartError(err, &se) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("err = %v, want a StartError saying the command is not found", err)
	}
}

func asStartError(err error, target **StartError) bool {
	se, ok := err.(*StartError)
	*target = se
	return ok
}

// readLine reads one line from f or fails after 10s.
func readLine(t *testing.T, f interface{ Read([]byte) (int, error) }) []byte {
	t.Helper()
	ch := make(chan []byte, 1)
	go func() {
		var line []byte
		b := make([]byte, 1)
		for {
			n, err := f.Read(b)
			if n == 1 {
				line = append(line, b[0])
				if b[0] == '\n' {
					break
				}
			}
			if err != nil {
				break
			}
		}
		ch <- line
	}()
	select {
	case l := <-ch:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no line within 10s")
	}
	return nil
}

// With nothing to record and no plan, the relay passes frames on without
// reading them; with probes possible it reads them for the era; with a plan
// that never acts it reads them for the triggers. Each way carries exactly
// the bytes sent.
func TestRelayIsByteExactUnrecorded(t *testing.T) {
	never, err := faults.Parse("drop:on=c2s:request:never/this")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"pass-through", Config{}},
		{"probes possible", Config{Probes: true}},
		{"plan that never acts", Config{Plan: faults.NewPlan(1, []*faults.Fault{never})}},
		{"pass-through, lines over a small cap", Config{MaxLine: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			in := arbitraryFrames(4, 300)
			cfg := tc.cfg
			cfg.Command, cfg.Grace = helperCommand(t, "cat"), 15*time.Second
			r := startRelayRecorded(t, cfg, nil)
			go func() {
				r.In.Write(in)
				r.In.Close()
			}()
			out := readAll(t, r.Out, 20*time.Second)
			r.wait(t, 20*time.Second)
			if !bytes.Equal(in, out) {
				t.Fatalf("relayed bytes differ: sent %d bytes, got %d; first difference at %d", len(in), len(out), firstDiff(in, out))
			}
		})
	}
}

// A pass-through session splices between OS files; where it cannot (the
// client's ends are not OS files, or its output is a file opened to append,
// which takes no splice) it relays the ordinary way, byte for byte still.
func TestPassThroughWhereSpliceCannot(t *testing.T) {
	in := arbitraryFrames(5, 300)
	run := func(t *testing.T, clientIn io.Reader, clientOut io.Writer) {
		t.Helper()
		checkNoGoroutineLeak(t)
		cfg := Config{Command: helperCommand(t, "cat"), Grace: 15 * time.Second}
		done := make(chan error, 1)
		go func() {
			_, err := Run(context.Background(), cfg, clientIn, clientOut)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("relay did not end within 30s")
		}
	}
	t.Run("client ends are not OS files", func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		go func() {
			inW.Write(in)
			inW.Close()
		}()
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(outR)
			got <- b
		}()
		run(t, inR, outW)
		outW.Close()
		if out := <-got; !bytes.Equal(in, out) {
			t.Fatalf("relayed bytes differ: sent %d bytes, got %d; first difference at %d", len(in), len(out), firstDiff(in, out))
		}
	})
	t.Run("client output is a file opened to append", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "out")
		out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		inR, inW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			inW.Write(in)
			inW.Close()
		}()
		run(t, inR, out)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(in, got) {
			t.Fatalf("relayed bytes differ: sent %d bytes, got %d; first difference at %d", len(in), len(got), firstDiff(in, got))
		}
	})
}

// A plan that watches only the client's messages decides the same whether
// the server's are read (a recorded session) or passed on unread (an
// unrecorded one): the draws of one direction do not depend on the other.
func TestUnwatchedDirectionDecidesTheSame(t *testing.T) {
	var in bytes.Buffer
	for i := range 200 {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`+"\n", i)
	}
	relayed := func(rec *MemoryRecorder) []byte {
		plan := mustPlan(t, 7, "drop:on=c2s:request:tools/call,p=0.5,times=0")
		if plan.Watches(wire.ToClient) {
			t.Fatal("the plan watches the server's messages; the test needs one that does not")
		}
		r := startRelayRecorded(t, Config{Command: helperCommand(t, "cat"), Plan: plan}, rec)
		go func() {
			r.In.Write(in.Bytes())
			r.In.Close()
		}()
		out := readAll(t, r.Out, 20*time.Second)
		r.wait(t, 20*time.Second)
		return out
	}
	recorded, unrecorded := relayed(NewMemoryRecorder()), relayed(nil)
	if n := bytes.Count(recorded, []byte("\n")); n == 0 || n == 200 {
		t.Fatalf("%d of 200 requests came back; the plan should drop about half", n)
	}
	if diff := cmp.Diff(string(recorded), string(unrecorded)); diff != "" {
		t.Errorf("what came back differs (-recorded +unrecorded):\n%s", diff)
	}
}

// A direction is relayed as bytes, never framed, only when nothing can
// depend on its frames: no recorder, no liveness probe, and a plan that
// neither watches it nor holds a fault that acts beyond its own message.
func TestUnframedDirections(t *testing.T) {
	type both struct{ C2S, S2C bool }
	for _, tc := range []struct {
		name   string
		rec    Recorder
		probes bool
		specs  []string
		want   both
	}{
		{name: "no plan, no record", want: both{true, true}},
		{name: "recorded", rec: NewMemoryRecorder(), want: both{}},
		{name: "probed", probes: true, want: both{}},
		{name: "a local fault on the client's requests", specs: []string{"drop:on=c2s:request:tools/call"}, want: both{false, true}},
		{name: "the same, recorded", rec: NewMemoryRecorder(), specs: []string{"drop:on=c2s:request:tools/call"}, want: both{}},
		{name: "a local fault on the server's answers", specs: []string{"delay:on=s2c:response,for=1ms"}, want: both{}},
		{name: "a fault that injects toward the client", specs: []string{"burst:on=c2s:request:tools/call"}, want: both{}},
		{name: "a fault that stalls", specs: []string{"drop:on=c2s:request:x", "stall:on=c2s:request:tools/call"}, want: both{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &session{rec: tc.rec, cfg: Config{Probes: tc.probes}}
			if tc.specs != nil {
				s.plan = mustPlan(t, 1, tc.specs...)
			}
			got := both{s.unframed(wire.ToServer), s.unframed(wire.ToClient)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unframed (-want +got):\n%s", diff)
			}
		})
	}
}
