//go:build unix

package chaos

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// startInitializedMCP is startMCPWith past the initialize handshake.
func startInitializedMCP(t *testing.T, cfg Config, specs ...string) *mcpSession {
	t.Helper()
	s := startMCPWith(t, cfg, specs...)
	s.initialize(t)
	return s
}

// verdict judges the session's transcript as mcpchaos test would.
func verdict(s *mcpSession) judge.Verdict {
	return judge.Session(s.Rec.Events())
}

// findingKinds lists "kind: message" for each finding.
func findingKinds(v judge.Verdict) []string {
	var out []string
	for _, f := range v.Findings {
		out = append(out, f.Kind+": "+f.Message)
	}
	return out
}

// signals lists "SIGNAME: detail" for each signal mcpchaos sent.
func signals(events []wire.Event) []string {
	var out []string
	for _, e := range eventsOf(events, wire.EventSignal) {
		out = append(out, e.Signal+": "+e.Detail)
	}
	return out
}

// signal KILL: the server dies mid-call of our SIGKILL; the client's call
// fails; the judge does not call it a crash, and notes the call as the
// fault's doing rather than a lost response.
func TestSignalKillWithRealMCPServer(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startInitializedMCP(t, Config{}, "signal:on=c2s:request:tools/call,sig=KILL")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := s.call(ctx, "slow", map[string]any{"ms": 2000, "steps": 1}, ""); err == nil {
		t.Error("the call was answered by a server killed while it ran")
	}
	res := s.wait(t, 15*time.Second)
	if res.Signal != "SIGKILL" || res.SignalledByUs {
		t.Errorf("server ended %+v; want killed by the fault's SIGKILL, not the ladder", res)
	}
	events := s.Rec.Events()
	if diff := cmp.Diff([]string{"SIGKILL: fault signal#1"}, signals(events)); diff != "" {
		t.Errorf("signals (-want +got):\n%s", diff)
	}
	v := verdict(s)
	if len(v.Findings) != 0 {
		t.Errorf("findings %v; a server killed by a fault did not crash", findingKinds(v))
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "after mcpchaos signalled it") {
		t.Errorf("notes %q; want the unanswered call put down to our signal", v.Notes)
	}
}

// signal TERM: the mcp-go server shuts down on SIGTERM; no finding.
func TestSignalTermWithRealMCPServer(t *testing.T) {
	s := startInitializedMCP(t, Config{}, "signal:on=c2s:request:tools/call")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, _ = s.call(ctx, "slow", map[string]any{"ms": 2000, "steps": 1}, "")
	res := s.wait(t, 15*time.Second)
	if res.SignalledByUs || res.Signal == "" && (res.ExitCode == nil || *res.ExitCode != 0) {
		t.Errorf("server ended %+v; want it ended by the fault's SIGTERM", res)
	}
	if diff := cmp.Diff([]string{"SIGTERM: fault signal#1"}, signals(s.Rec.Events())); diff != "" {
		t.Errorf("signals (-want +got):\n%s", diff)
	}
	if v := verdict(s); len(v.Findings) != 0 {
		t.Errorf("findings %v; a server told to stop by a fault did not crash", findingKinds(v))
	}
}

// signal STOP: the server is frozen mid-call and continued after for; the
// call is answered once it is, and the judge finds nothing.
func TestSignalStopThenContinueWithRealMCPServer(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startInitializedMCP(t, Config{Deadline: 300 * time.Millisecond}, "signal:on=c2s:request:tools/call,sig=STOP,for=800ms")
	start := time.Now()
	res, err := s.call(t.Context(), "slow", map[string]any{"ms": 100, "steps": 1}, "")
	if err != nil || res.IsError {
		t.Fatalf("slow after a STOP: %v %+v", err, res)
	}
	if took := time.Since(start); took < 800*time.Millisecond {
		t.Errorf("the call took %s through an 800ms STOP", took)
	}
	// After SIGCONT the server answers again at once.
	start = time.Now()
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "awake"}, ""); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("echo after SIGCONT took %s", took)
	}
	end := s.end(t)
	if end.Signal != "" || end.ExitCode == nil || *end.ExitCode != 0 {
		t.Errorf("server ended %+v; want exit 0 after its stdin closed", end)
	}
	events := s.Rec.Events()
	want := []string{"SIGSTOP: fault signal#1: SIGCONT follows in 800ms", "SIGCONT: fault signal#1: the STOP lasted 800ms"}
	if diff := cmp.Diff(want, signals(events)); diff != "" {
		t.Errorf("signals (-want +got):\n%s", diff)
	}
	for _, e := range eventsOf(events, wire.EventFault) {
		// UntilUS is read off the clock just before the event is stamped.
		if d := e.UntilUS - e.T; e.Dir != "s2c" || d < 799_000 || d > 800_000 {
			t.Errorf("fault event %+v; want the STOP's window on s2c for the judge", e)
		}
	}
	if v := verdict(s); len(v.Findings) != 0 {
		t.Errorf("findings %v; want none", findingKinds(v))
	}
}

// signal STOP outlived by the session: when the client leaves during a long
// STOP, the ladder continues the server before closing its stdin, so it
// exits on its own at once instead of being killed (or waited on for ever).
func TestSignalStopIsContinuedBeforeTheLadder(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startInitializedMCP(t, Config{Grace: 2 * time.Second}, "signal:on=c2s:request:tools/call,sig=STOP,for=1h")
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := s.call(ctx, "echo", map[string]any{"text": "x"}, ""); err == nil {
		t.Log("echo was answered before the STOP landed")
	}
	start := time.Now()
	res := s.end(t)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the session took %s to end after the client left", took)
	}
	if res.Signal != "" || res.SignalledByUs {
		t.Errorf("server ended %+v; want it to exit on its stdin closing once continued", res)
	}
	events := s.Rec.Events()
	want := []string{"SIGSTOP: fault signal#1: SIGCONT follows in 1h0m0s", "SIGCONT: the shutdown ladder starts: the client closed its output"}
	if diff := cmp.Diff(want, signals(events)); diff != "" {
		t.Errorf("signals (-want +got):\n%s", diff)
	}
	var cont, closed int64
	for _, e := range events {
		switch {
		case e.Type == wire.EventSignal && e.Signal == "SIGCONT":
			cont = e.Seq
		case e.Type == wire.EventPipeClosed && e.Pipe == wire.PipeServerInput && closed == 0:
			closed = e.Seq
		}
	}
	if cont == 0 || closed < cont {
		t.Errorf("SIGCONT at seq %d, server stdin closed at seq %d; want SIGCONT first", cont, closed)
	}
	if v := verdict(s); len(v.Findings) != 0 {
		t.Errorf("findings %v; want none", findingKinds(v))
	}
}

// stderrReader is the client's end of the server's stderr: it reads nothing
// until start, as a client that pipes its server's stderr and reads it late.
type stderrReader struct {
	r, w *os.File
	n    chan int64
}

func newStderrReader(t *testing.T) *stderrReader {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sr := &stderrReader{r: r, w: w, n: make(chan int64, 1)}
	t.Cleanup(func() {
		w.Close()
		r.Close()
	})
	return sr
}

func (sr *stderrReader) start() {
	go func() {
		n, _ := io.Copy(io.Discard, sr.r)
		sr.n <- n
	}()
}

// floodDetails lists what became of the stderr floods: the fault events
// about the stderr pipe, not the decisions.
func floodDetails(events []wire.Event) []string {
	var out []string
	for _, e := range eventsOf(events, wire.EventFault) {
		if e.Action == "stderr-flood" && e.Pipe == wire.PipeServerStderr {
			out = append(out, e.Detail)
		}
	}
	return out
}

// stderr-flood: with nobody reading the client's stderr pipe, the flood
// blocks and the server's answer is held, as a server blocked on a log write
// would hold it; once the client reads, the flood goes out and the answer
// follows.
func TestStderrFloodBlocksUntilTheClientReads(t *testing.T) {
	checkNoGoroutineLeak(t)
	sr := newStderrReader(t)
	s := startInitializedMCP(t, Config{Stderr: sr.w}, "stderr-flood:on=c2s:request:tools/call")
	go func() {
		time.Sleep(600 * time.Millisecond)
		sr.start()
	}()
	start := time.Now()
	res, err := s.call(t.Context(), "echo", map[string]any{"text": "after the logs"}, "")
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if took := time.Since(start); took < 600*time.Millisecond {
		t.Errorf("the answer came after %s, before the client read the flood", took)
	}
	s.end(t)
	sr.w.Close()
	if n := <-sr.n; n < 1<<20 {
		t.Errorf("the client read %d bytes of stderr; want the 1 MiB flood", n)
	}
	events := s.Rec.Events()
	got := floodDetails(events)
	if len(got) != 1 || !strings.HasPrefix(got[0], "wrote 1048576 bytes of log lines to the client's stderr pipe in ") ||
		!strings.Contains(got[0], "the reader stalled (a write blocked for") || !strings.HasSuffix(got[0], "then caught up; the server's output was held meanwhile") {
		t.Errorf("flood outcome %q", got)
	}
	for _, e := range eventsOf(events, wire.EventStderr) {
		if strings.Contains(e.Raw, "stderr-flood") {
			t.Fatalf("the flood was recorded as the server's stderr: %q", e.Raw)
		}
	}
	if v := verdict(s); len(v.Findings) != 0 {
		t.Errorf("findings %v; want none", findingKinds(v))
	}
}

// stderr-flood with a client that never reads: the flood gives up at its
// timeout, says so, and lets the held answer through.
func TestStderrFloodGivesUpOnAStalledReader(t *testing.T) {
	checkNoGoroutineLeak(t)
	sr := newStderrReader(t)
	s := startInitializedMCP(t, Config{Stderr: sr.w, Deadline: 200 * time.Millisecond}, "stderr-flood:on=c2s:request:tools/call,timeout=700ms")
	start := time.Now()
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "x"}, ""); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 700*time.Millisecond {
		t.Errorf("the answer came after %s, inside the flood's 700ms", took)
	}
	s.end(t)
	got := floodDetails(s.Rec.Events())
	if len(got) != 1 || !strings.HasSuffix(got[0], "bytes to the client's stderr pipe, then gave up after 700ms: the reader stalled, the write blocked; the server's output was held meanwhile") {
		t.Errorf("flood outcome %q", got)
	}
	if v := verdict(s); len(v.Findings) != 0 {
		t.Errorf("findings %v; want none", findingKinds(v))
	}
}

// stderr-flood block=false: the answer is not held while the flood blocks,
// and the session ending cuts the blocked flood short (no goroutine leaks).
func TestStderrFloodWithoutBlockAndEndedBySession(t *testing.T) {
	checkNoGoroutineLeak(t)
	sr := newStderrReader(t)
	s := startInitializedMCP(t, Config{Stderr: sr.w}, "stderr-flood:on=c2s:request:tools/call,block=false,timeout=1h")
	start := time.Now()
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "x"}, ""); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("the answer took %s with block=false", took)
	}
	s.end(t)
	got := floodDetails(s.Rec.Events())
	if len(got) != 1 || !strings.HasSuffix(got[0], "bytes to the client's stderr pipe before the session ended: the reader stalled, the write blocked") {
		t.Errorf("flood outcome %q", got)
	}
}

// stderr-flood without a stderr to flood is skipped, and says why.
func TestStderrFloodSkippedWithoutStderr(t *testing.T) {
	s := startInitializedMCP(t, Config{}, "stderr-flood:on=c2s:request:tools/call")
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "x"}, ""); err != nil {
		t.Fatal(err)
	}
	s.end(t)
	got := floodDetails(s.Rec.Events())
	want := []string{"skipped: the relay passes the server's stderr to nobody (no Config.Stderr), so there is no reader to flood"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flood events (-want +got):\n%s", diff)
	}
}

// linger: the client closes its output, and the shutdown waits for the
// linger; the server then exits on its stdin closing, with no finding.
func TestLingerPutsOffTheShutdown(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startInitializedMCP(t, Config{}, "linger:for=800ms")
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "x"}, ""); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := s.end(t)
	if took := time.Since(start); took < 800*time.Millisecond || took > 3*time.Second {
		t.Errorf("the session ended %s after the client left; want just after the 800ms linger", took)
	}
	if res.Signal != "" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Errorf("server ended %+v; want exit 0", res)
	}
	var got []string
	for _, e := range eventsOf(s.Rec.Events(), wire.EventFault) {
		got = append(got, e.Detail)
	}
	want := []string{
		"ignore the client's EOF and SIGTERM/SIGINT for 800ms once they come",
		"ignored (the client closed its output): the linger lasts 800ms more",
		"the linger ends: shutting down as asked (the client closed its output)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("linger events (-want +got):\n%s", diff)
	}
	if v := verdict(s); len(v.Findings) != 0 {
		t.Errorf("findings %v; want none", findingKinds(v))
	}
}

// IgnoreSignal and Interrupts: during a linger SIGTERM and SIGINT are
// ignored (and recorded); SIGKILL-like others never are; once the linger
// ends, a SIGTERM interrupts the session.
func TestLingerIgnoresSignalsUntilItEnds(t *testing.T) {
	checkNoGoroutineLeak(t)
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	defer inW.Close()
	defer outR.Close()
	rec := NewMemoryRecorder()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	h, err := Start(ctx, Config{Command: helperCommand(t, "cat"), Plan: mustPlan(t, 1, "linger:for=600ms"), Recorder: rec, Grace: 2 * time.Second}, inR, outW)
	if err != nil {
		t.Fatal(err)
	}
	if h.IgnoreSignal(syscall.SIGTERM) {
		t.Error("SIGTERM ignored before the linger fault fired")
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	readAllLine(t, outR)

	var mu sync.Mutex
	var interrupts []string
	sigs := make(chan os.Signal, 1)
	go h.Interrupts(sigs, func(why error) {
		mu.Lock()
		defer mu.Unlock()
		interrupts = append(interrupts, why.Error())
		cancel(why)
	})
	if h.IgnoreSignal(syscall.SIGHUP) {
		t.Error("SIGHUP ignored: a linger ignores only SIGTERM and SIGINT")
	}
	sigs <- syscall.SIGINT // starts the linger
	start := time.Now()
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	if len(interrupts) != 0 {
		t.Errorf("interrupted during the linger: %v", interrupts)
	}
	mu.Unlock()
	if !h.IgnoreSignal(syscall.SIGTERM) {
		t.Error("SIGTERM not ignored during the linger")
	}
	select {
	case <-h.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after the linger")
	}
	if took := time.Since(start); took < 600*time.Millisecond {
		t.Errorf("the session ended %s after SIGINT, inside the 600ms linger", took)
	}
	var got []string
	for _, e := range eventsOf(rec.Events(), wire.EventFault) {
		got = append(got, e.Detail)
	}
	if len(got) != 4 || !strings.HasPrefix(got[1], "ignored (mcpchaos got SIGINT): the linger lasts 600ms more") ||
		!strings.HasPrefix(got[2], "ignored (mcpchaos got SIGTERM): the linger lasts") ||
		got[3] != "the linger ends: shutting down as asked (mcpchaos got SIGINT)" {
		t.Errorf("linger events %q", got)
	}
}

// readAllLine reads one line from r or fails after a while.
func readAllLine(t *testing.T, r io.Reader) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		b := make([]byte, 1)
		for {
			if _, err := r.Read(b); err != nil || b[0] == '\n' {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no line relayed within 5s")
	}
}
