//go:build unix

package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// startMCPWith is startMCP with more of the session's configuration.
func startMCPWith(t *testing.T, cfg Config, specs ...string) *mcpSession {
	t.Helper()
	cfg.Command, cfg.Plan = helperCommand(t, "mcp-server"), mustPlan(t, 42, specs...)
	r := startRelay(t, cfg)
	tr := transport.NewIO(r.Out, r.In, io.NopCloser(strings.NewReader("")))
	s := &mcpSession{relay: r, client: client.NewClient(tr)}
	s.client.OnNotification(func(n mcp.JSONRPCNotification) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.notes = append(s.notes, n)
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := s.client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.client.Close() })
	return s
}

// judgedClean fails the test when the judge finds anything wrong with the
// server in the recorded session.
func judgedClean(t *testing.T, events []wire.Event) {
	t.Helper()
	v := judge.Session(events)
	for _, f := range v.Findings {
		t.Errorf("the judge found %s: %s", f.Kind, f.Message)
	}
	for _, n := range v.Indeterminate {
		t.Errorf("the judge could not decide: %s", n)
	}
}

// waitFor polls the transcript until cond holds, failing after timeout.
func waitFor(t *testing.T, s *mcpSession, timeout time.Duration, what string, cond func([]wire.Event) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond(s.Rec.Events()) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// received returns the seqs of the frames received in dir with this method
// (for an answer, use kind "response" and method "").
func receivedSeqs(events []wire.Event, dir, kind, method string) []int64 {
	var out []int64
	for _, e := range eventsOf(events, wire.EventReceived) {
		if e.Dir == dir && e.Kind == kind && (method == "" || e.Method == method) {
			out = append(out, e.Seq)
		}
	}
	return out
}

// forwardOrder lists the received seqs in the order they were forwarded in dir.
func forwardOrder(events []wire.Event, dir string) []int64 {
	var out []int64
	for _, e := range eventsOf(events, wire.EventForwarded) {
		if e.Dir == dir {
			out = append(out, e.Of)
		}
	}
	return out
}

// reorder mode=swap: the first tools/call is held until the second has been
// forwarded, so the server reads them swapped; it answers both.
func TestReorderSwapsTwoCalls(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startMCP(t, "reorder:on=c2s:request:tools/call,max=5s")
	s.initialize(t)
	first := make(chan error, 1)
	go func() {
		res, err := s.call(t.Context(), "echo", map[string]any{"text": "first"}, "")
		if err == nil && (res.IsError || !strings.Contains(fmt.Sprint(res.Content), "first")) {
			err = fmt.Errorf("echo first answered %+v", res)
		}
		first <- err
	}()
	waitFor(t, s, 5*time.Second, "hold of the first call", func(ev []wire.Event) bool { return len(eventsOf(ev, wire.EventFault)) > 0 })
	start := time.Now()
	res, err := s.call(t.Context(), "echo", map[string]any{"text": "second"}, "")
	if err != nil || res.IsError {
		t.Fatalf("second echo: %v %+v", err, res)
	}
	if err := <-first; err != nil {
		t.Fatalf("first echo: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the held call was answered %s after the second; it should be released by it, not by max=5s", took)
	}
	s.end(t)
	events := s.Rec.Events()
	calls := receivedSeqs(events, "c2s", "request", "tools/call")
	if len(calls) != 2 {
		t.Fatalf("server-bound tools/call frames: %v; want 2", calls)
	}
	order := forwardOrder(events, "c2s")
	if diff := cmp.Diff([]int64{calls[1], calls[0]}, order[len(order)-2:]); diff != "" {
		t.Errorf("forwarding order of the two calls (-want +got):\n%s", diff)
	}
	want := []string{
		"reorder#1: hold the message until the next c2s message has been forwarded (at most 5s)",
		fmt.Sprintf("reorder#1: release the held frame after the frame of seq %d", calls[1]),
	}
	if diff := cmp.Diff(want, faultEvents(events)); diff != "" {
		t.Errorf("fault decisions (-want +got):\n%s", diff)
	}
	judgedClean(t, events)
}

// reorder mode=swap with nothing coming after: max releases the message.
func TestReorderSwapReleasedByMax(t *testing.T) {
	s := startMCP(t, "reorder:on=c2s:request:tools/call,max=300ms")
	s.initialize(t)
	start := time.Now()
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "alone"}, ""); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("the held call was answered after %s, before max=300ms", took)
	}
	s.end(t)
	events := s.Rec.Events()
	want := []string{
		"reorder#1: hold the message until the next c2s message has been forwarded (at most 300ms)",
		"reorder#1: release the held frame after 300ms, the longest hold (max=)",
	}
	if diff := cmp.Diff(want, faultEvents(events)); diff != "" {
		t.Errorf("fault decisions (-want +got):\n%s", diff)
	}
	judgedClean(t, events)
}

// reorder mode=response-first: every progress notification of a slow call
// reaches the client after the call's response.
func TestReorderResponseFirst(t *testing.T) {
	s := startMCP(t, "reorder:mode=response-first,max=5s")
	s.initialize(t)
	if _, err := s.call(t.Context(), "slow", map[string]any{"ms": 150, "steps": 3}, "tok-rf"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, 5*time.Second, "late progress", func([]wire.Event) bool { return len(s.notifications("notifications/progress")) >= 3 })
	s.end(t)
	events := s.Rec.Events()
	progress := receivedSeqs(events, "s2c", "notification", "notifications/progress")
	answers := receivedSeqs(events, "s2c", "response", "")
	if len(progress) < 2 || len(answers) != 2 {
		t.Fatalf("received progress %v and responses %v; want several progress and 2 responses", progress, answers)
	}
	want := append([]int64{answers[0], answers[1]}, progress...)
	if diff := cmp.Diff(want, forwardOrder(events, "s2c")); diff != "" {
		t.Errorf("s2c forwarding order (-want +got):\n%s", diff)
	}
	decisions := faultEvents(events)
	if len(decisions) != 2*len(progress) || !strings.HasPrefix(decisions[0], `reorder#1: hold progress for token "tok-rf"`) {
		t.Errorf("fault decisions %q; want a hold and a release per progress notification", decisions)
	}
	judgedClean(t, events)
}

// reorder mode=late-progress: one more progress for the call's token reaches
// the client after its response; without a token the fault skips.
func TestReorderLateProgress(t *testing.T) {
	s := startMCP(t, "reorder:mode=late-progress")
	s.initialize(t) // the initialize response carries no token: skipped
	if _, err := s.call(t.Context(), "echo", map[string]any{"text": "x"}, "tok-late"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, 5*time.Second, "late progress", func([]wire.Event) bool { return len(s.notifications("notifications/progress")) == 1 })
	s.end(t)
	events := s.Rec.Events()
	want := []string{
		"reorder#1: skipped: the request this answers carried no progress token",
		`reorder#1: inject notifications/progress for token "tok-late" right after the answer to tools/call 2`,
	}
	if diff := cmp.Diff(want, faultEvents(events)); diff != "" {
		t.Errorf("fault decisions (-want +got):\n%s", diff)
	}
	var order []string
	for _, e := range events {
		if e.Dir == "s2c" && (e.Type == wire.EventForwarded || e.Type == wire.EventInjected) {
			order = append(order, e.Type)
		}
	}
	if diff := cmp.Diff([]string{"forwarded", "forwarded", "injected"}, order); diff != "" {
		t.Errorf("s2c order (-want +got):\n%s", diff)
	}
	judgedClean(t, events)
}

// fragment: the tools/call reaches the server in four writes 30ms apart,
// and the server reassembles and answers it.
func TestFragmentedRequest(t *testing.T) {
	s := startMCP(t, "fragment:on=c2s:request:tools/call,pieces=4,gap=30ms")
	s.initialize(t)
	start := time.Now()
	res, err := s.call(t.Context(), "echo", map[string]any{"text": "in pieces"}, "")
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if took := time.Since(start); took < 90*time.Millisecond {
		t.Errorf("answered after %s; three 30ms gaps should take at least 90ms", took)
	}
	s.end(t)
	events := s.Rec.Events()
	d := faultEvents(events)
	if len(d) != 1 || !strings.HasPrefix(d[0], "fragment#1: write the message in 4 pieces, cut after bytes [") {
		t.Errorf("fault decisions %q", d)
	}
	call := receivedSeqs(events, "c2s", "request", "tools/call")[0]
	if diff := cmp.Diff([]string{"forwarded c2s"}, eventsAbout(events, call)); diff != "" {
		t.Errorf("events of the call (-want +got):\n%s", diff)
	}
	judgedClean(t, events)
}

// throttle: a 32 KiB answer through a 16 KiB/s link takes about two seconds,
// arrives whole, and the server is judged clean.
func TestThrottledAnswer(t *testing.T) {
	checkNoGoroutineLeak(t)
	s := startMCP(t, "throttle:on=c2s:request:tools/call,dir=s2c,rate=16KiB")
	s.initialize(t)
	start := time.Now()
	res, err := s.call(t.Context(), "big", map[string]any{"kib": 32}, "")
	if err != nil || res.IsError {
		t.Fatalf("big: %v %+v", err, res)
	}
	if took := time.Since(start); took < 1800*time.Millisecond || took > 4*time.Second {
		t.Errorf("a 32 KiB answer at 16 KiB/s took %s; want about 2s", took)
	}
	s.end(t)
	events := s.Rec.Events()
	got := faultEvents(events)
	want := "throttle#1: pace frames toward the client to 16384 bytes per second for the rest of the session"
	if len(got) == 0 || got[0] != want {
		t.Fatalf("fault events %q; want the decision %q first", got, want)
	}
	// Each long paced write is a window during which the relay read nothing
	// from the server, which the judge must know (as for a stall).
	long := false
	for _, e := range eventsOf(events, wire.EventFault)[1:] {
		if e.Action != "throttle" || e.Dir != "s2c" || e.UntilUS <= e.T || !strings.HasPrefix(e.Detail, "pace a frame of ") {
			t.Errorf("after the decision, %+v; want only paced-write windows toward the client", e)
		}
		long = long || e.UntilUS-e.T >= 1500*1000
	}
	if !long {
		t.Errorf("no paced-write window of the 32 KiB answer (about 2s) in %q", got)
	}
	judgedClean(t, events)
}

// oversize: a tools/call grown to 1 MiB and to 16 MiB with _meta padding is
// still answered by the mcp-go server.
func TestOversizedRequest(t *testing.T) {
	for _, size := range []struct {
		spec  string
		bytes int
	}{{"1MiB", 1 << 20}, {"16MiB", 16 << 20}} {
		t.Run(size.spec, func(t *testing.T) {
			// A race-instrumented mcp-go server takes some 15s to parse
			// 16 MiB (3s without): the judge is told the deadline.
			s := startMCPWith(t, Config{Deadline: 40 * time.Second}, "oversize:on=c2s:request:tools/call,size="+size.spec)
			s.initialize(t)
			ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
			defer cancel()
			res, err := s.call(ctx, "echo", map[string]any{"text": "big"}, "")
			if err != nil || res.IsError {
				t.Fatalf("echo: %v %+v", err, res)
			}
			s.end(t)
			events := s.Rec.Events()
			call := receivedSeqs(events, "c2s", "request", "tools/call")[0]
			want := []string{"dropped c2s replaced by fault oversize#1", "injected c2s oversize#1"}
			if diff := cmp.Diff(want, eventsAbout(events, call)); diff != "" {
				t.Errorf("events of the call (-want +got):\n%s", diff)
			}
			for _, e := range eventsOf(events, wire.EventInjected) {
				if raw, _ := e.Bytes(); len(raw) != size.bytes || e.Kind != "request" || e.Method != "tools/call" {
					t.Errorf("injected a %s %s of %d bytes; want a tools/call of %d", e.Kind, e.Method, len(raw), size.bytes)
				}
			}
			judgedClean(t, events)
		})
	}
}

// readLineTimed reads from r until a newline, noting how many bytes had
// arrived at each read.
func readLineTimed(t *testing.T, r io.Reader, timeout time.Duration) (line []byte, reads []int) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 1<<16)
	for !bytes.HasSuffix(line, []byte("\n")) {
		if time.Now().After(deadline) {
			t.Fatalf("no whole line within %s; got %q", timeout, line)
		}
		n, err := r.Read(buf)
		line = append(line, buf[:n]...)
		reads = append(reads, len(line))
		if err != nil {
			t.Fatalf("read: %v after %q", err, line)
		}
	}
	return line, reads
}

// fragment at the byte level: the client's reads see the frame arrive in the
// pieces the fault cut, the newline only with the last.
func TestFragmentArrivesInPieces(t *testing.T) {
	checkNoGoroutineLeak(t)
	r := startRelay(t, Config{Command: helperCommand(t, "cat"), Plan: mustPlan(t, 3, "fragment:on=s2c,pieces=4,gap=80ms")})
	frame := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"cut me"}}` + "\n"
	if _, err := r.In.Write([]byte(frame)); err != nil {
		t.Fatal(err)
	}
	got, reads := readLineTimed(t, r.Out, 5*time.Second)
	if string(got) != frame {
		t.Errorf("the client got %q; want %q", got, frame)
	}
	r.In.Close()
	r.wait(t, 15*time.Second)
	events := r.Rec.Events()
	var cuts []int
	for _, e := range eventsOf(events, wire.EventFault) {
		// "write the message in 4 pieces, cut after bytes [a b c], 80ms apart"
		_, list, _ := strings.Cut(e.Detail, "[")
		list, _, _ = strings.Cut(list, "]")
		for _, f := range strings.Fields(list) {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("fault detail %q: %v", e.Detail, err)
			}
			cuts = append(cuts, n)
		}
	}
	if len(cuts) != 3 {
		t.Fatalf("cuts %v from %v; want 3", cuts, faultEvents(events))
	}
	// With 80ms between pieces each read ends at a cut.
	if diff := cmp.Diff(append(cuts, len(frame)), reads); diff != "" {
		t.Errorf("bytes received by each read (-cuts +reads):\n%s", diff)
	}
}

// A held frame whose direction ends goes out then, while its pipe is still
// open: the server's echo, held for an hour, reaches the client when the
// server's output ends.
func TestHeldFrameReleasedWhenItsSourceEnds(t *testing.T) {
	checkNoGoroutineLeak(t)
	r := startRelay(t, Config{Command: helperCommand(t, "cat"), Plan: mustPlan(t, 1, "reorder:on=s2c,max=1h")})
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"held"}}` + "\n"
	if _, err := r.In.Write([]byte(note)); err != nil {
		t.Fatal(err)
	}
	waitForEvents(t, r, 1)
	r.In.Close() // cat's stdin closes, cat exits, its output ends
	got, _ := readLineTimed(t, r.Out, 10*time.Second)
	if string(got) != note {
		t.Errorf("the client got %q; want the held echo %q", got, note)
	}
	r.wait(t, 15*time.Second)
	events := r.Rec.Events()
	echo := receivedSeqs(events, "s2c", "notification", "notifications/message")[0]
	want := []string{"fault s2c reorder#1 release the held frame as nothing more comes from the server", "forwarded s2c"}
	if diff := cmp.Diff(want, eventsOfSeq(events, echo)); diff != "" {
		t.Errorf("events of the held echo (-want +got):\n%s", diff)
	}
}

// A held frame whose pipe has closed is recorded as dropped, with why: here
// an eof fault closed the server's stdin after the request was held, and
// the server (cat) exited, ending the session.
func TestHeldFrameDroppedWhenItsPipeIsClosed(t *testing.T) {
	checkNoGoroutineLeak(t)
	r := startRelay(t, Config{Command: helperCommand(t, "cat"), Plan: mustPlan(t, 1, "reorder:on=c2s:request,max=1h", "eof:on=c2s:request,position=after")})
	if _, err := r.In.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	r.wait(t, 15*time.Second)
	events := r.Rec.Events()
	ping := receivedSeqs(events, "c2s", "request", "ping")[0]
	want := []string{"fault eof#1 close the server's stdin", "fault c2s reorder#1 release the held frame as the session ends", "dropped c2s the server-stdin pipe is closed"}
	if diff := cmp.Diff(want, eventsOfSeq(events, ping)); diff != "" {
		t.Errorf("events of the held request (-want +got):\n%s", diff)
	}
	if n := len(eventsOf(events, wire.EventForwarded)); n != 0 {
		t.Errorf("%d frames forwarded; the held request never reached the server", n)
	}
}

// waitForEvents waits until the transcript holds n fault events.
func waitForEvents(t *testing.T, r *relay, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(eventsOf(r.Rec.Events(), wire.EventFault)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d fault events within 5s", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// eventsOfSeq lists "type dir fault detail" for every event after the hold
// that refers to the received frame seq.
func eventsOfSeq(events []wire.Event, seq int64) []string {
	var out []string
	for _, e := range events {
		if e.Of == seq && !strings.HasPrefix(e.Detail, "hold ") {
			out = append(out, strings.Join(strings.Fields(strings.Join([]string{e.Type, e.Dir, e.Fault, e.Detail}, " ")), " "))
		}
	}
	return out
}

// The pauses of paced and fragmented writes end with the session: what is
// left is written at once, so no write outlives its session by much.
func TestShapedWritesEndWithTheSession(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	go io.Copy(io.Discard, pr)
	done := make(chan struct{})
	w := newEndWriter(pw, pw.Close)
	w.done = done
	w.setPace(64, 0, nil) // a 4 KiB frame would take a minute
	time.AfterFunc(200*time.Millisecond, func() { close(done) })
	start := time.Now()
	if _, err := w.put(bytes.Repeat([]byte("x"), 4096), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := w.putPieces([][]byte{[]byte("a"), []byte("b"), []byte("\n")}, time.Hour, 2); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 150*time.Millisecond || took > 2*time.Second {
		t.Errorf("paced writes took %s; want them paced until the session ended at 200ms, then at once", took)
	}
	pw.Close()
}

// A throttle that expires stops pacing.
func TestThrottleExpires(t *testing.T) {
	w := newEndWriter(io.Discard, nil)
	w.setPace(64, 50*time.Millisecond, nil)
	if w.pacing() == nil {
		t.Fatal("no pacing right after setPace")
	}
	time.Sleep(80 * time.Millisecond)
	if p := w.pacing(); p != nil {
		t.Errorf("pacing %+v still in force after for=50ms", p)
	}
	start := time.Now()
	if _, err := w.put(bytes.Repeat([]byte("x"), 4096), 1); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("an unthrottled write took %s", took)
	}
}

// oversize on the way back: the mcp-go client reads a tool result grown to
// 1 MiB and takes it as the answer.
func TestOversizedResponse(t *testing.T) {
	s := startMCPWith(t, Config{Deadline: 40 * time.Second}, "oversize:on=s2c:response:tools/call,size=1MiB")
	s.initialize(t)
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	res, err := s.call(ctx, "echo", map[string]any{"text": "grown"}, "")
	if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.Content), "grown") {
		t.Fatalf("echo: %v %+v", err, res)
	}
	s.end(t)
	events := s.Rec.Events()
	injected := eventsOf(events, wire.EventInjected)
	if len(injected) != 1 {
		t.Fatalf("injected %d frames; want the grown response", len(injected))
	}
	if e := injected[0]; e.Kind != "response" || e.Size != 1<<20 {
		t.Errorf("injected a %s of %d bytes; want a response of 1 MiB", e.Kind, e.Size)
	}
	judgedClean(t, events)
}

// A hold that runs out while an over-long line is being relayed in pieces
// waits for the line's end: the released frame never lands inside it.
func TestHoldReleaseWaitsForTheEndOfALongLine(t *testing.T) {
	checkNoGoroutineLeak(t)
	r := startRelay(t, Config{Command: helperCommand(t, "cat"), MaxLine: 1024, Plan: mustPlan(t, 1, "reorder:on=s2c,max=150ms")})
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"held"}}` + "\n"
	if _, err := r.In.Write([]byte(note)); err != nil {
		t.Fatal(err)
	}
	waitForEvents(t, r, 1)
	// More than the relay's 64 KiB read buffer without a newline: the
	// first piece goes out at once, the rest after the hold has run out.
	long := bytes.Repeat([]byte("y"), 100<<10)
	if _, err := r.In.Write(long[:80<<10]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := r.In.Write(append(long[80<<10:], '\n')); err != nil {
		t.Fatal(err)
	}
	want := append(append(long, '\n'), note...)
	got := make([]byte, len(want))
	if _, err := io.ReadFull(r.Out, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		at := bytes.Index(got, []byte("{"))
		t.Errorf("the held frame came at byte %d of the output; want it after the %d-byte long line", at, len(long)+1)
	}
	r.In.Close()
	r.wait(t, 15*time.Second)
}
