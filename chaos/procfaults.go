package chaos

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/wire"
)

// The process-level faults: a signal to the server (signal), log text on the
// server's stderr as the client reads it (stderr-flood), and a shutdown put
// off (linger). Each keeps its state here, so that the relay proper only
// calls applyProcess, resume, postpone and floods.end.

// useClock gives the plan the session's clock, so that from= and until= are
// measured on the transcript's T.
func (s *session) useClock() {
	if s.plan == nil {
		return
	}
	if rec := s.rec; rec != nil {
		s.plan.SetClock(func() time.Duration { return time.Duration(rec.Now()) * time.Microsecond })
		return
	}
	start := time.Now()
	s.plan.SetClock(func() time.Duration { return time.Since(start) })
}

// applyProcess carries out the process-level part of one firing.
func (s *session) applyProcess(label string, e faults.Effect) {
	if e.Signal != nil {
		s.signalFault(label, e.Signal)
	}
	if e.StderrFlood != nil {
		s.stderrFlood(label, e.StderrFlood)
	}
	if e.Linger != nil {
		s.armLinger(label, e.Linger.For)
	}
}

// heldWindow marks, on a fault's event, the window during which the fault
// keeps the server from answering (a SIGSTOP, a blocking stderr flood at
// most until it gives up), as a stall's event does: the judge excuses the
// server's silence inside it.
func (s *session) heldWindow(ev *wire.Event, e faults.Effect) {
	var d time.Duration
	switch {
	case e.Signal != nil && e.Signal.Name == "SIGSTOP":
		d = e.Signal.For
	case e.StderrFlood != nil && e.StderrFlood.Block && mayBlock(s.cfg.Stderr):
		d = e.StderrFlood.Timeout
	default:
		return
	}
	ev.Dir, ev.UntilUS = wire.ToClient.String(), s.rec.Now()+d.Microseconds()
}

// --- signal ---

// stopState is a server stopped by a signal fault, awaiting its SIGCONT.
type stopState struct {
	mu      sync.Mutex
	stopped bool
	gen     int // which STOP the pending SIGCONT belongs to
}

func (s *session) signalFault(label string, sg *faults.Signal) {
	sig, ok := faultSignals[sg.Name]
	if !ok {
		s.record(wire.Event{Type: wire.EventError, Fault: label, Detail: "signal fault: unknown signal " + sg.Name})
		return
	}
	if sg.Name != "SIGSTOP" {
		s.sendSignal(sg.Name, sig, "fault "+label)
		return
	}
	s.stop.mu.Lock()
	s.stop.stopped = true
	s.stop.gen++
	gen := s.stop.gen
	// Sent under the lock, so that a resume cannot slip between the state
	// and the signal and leave the server stopped.
	s.sendSignal(sg.Name, sig, fmt.Sprintf("fault %s: SIGCONT follows in %s", label, sg.For))
	s.stop.mu.Unlock()
	s.goBackground(func() {
		t := time.NewTimer(sg.For)
		defer t.Stop()
		select {
		case <-t.C:
			s.resumeGen(gen, fmt.Sprintf("fault %s: the STOP lasted %s", label, sg.For))
		case <-s.done:
		}
	})
}

func (s *session) sendSignal(name string, sig syscall.Signal, why string) {
	s.record(wire.Event{Type: wire.EventSignal, Signal: name, PID: s.proc.PID(), Detail: why, ByUs: true})
	if !s.proc.SignalGroup(sig) {
		s.record(wire.Event{Type: wire.EventError, Signal: name, Detail: "the server's process group is gone: " + name + " reached no process"})
	}
}

// resume continues a server a signal fault stopped, if one did.
func (s *session) resume(why string) { s.resumeGen(0, why) }

// resumeGen continues the server if the STOP of generation gen (0: any) is
// still in force.
func (s *session) resumeGen(gen int, why string) {
	s.stop.mu.Lock()
	defer s.stop.mu.Unlock()
	if !s.stop.stopped || gen != 0 && gen != s.stop.gen {
		return
	}
	s.stop.stopped = false
	s.sendSignal("SIGCONT", sigCONT, why)
}

// --- stderr-flood ---

// floodStalled is how long one write of a flood must block for the reader to
// count as stalled rather than busy.
const floodStalled = 100 * time.Millisecond

// floodSet tracks the stderr floods in progress, so that none outlives the
// session: at its end each is given a deadline that has passed.
type floodSet struct {
	mu     sync.Mutex
	active map[*os.File]bool
	ended  bool // no flood starts after the session's end
	wg     sync.WaitGroup
}

// add registers a flood about to start; it reports false once the session
// has ended, when the flood must not start.
func (f *floodSet) add(w *os.File) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return false
	}
	if f.active == nil {
		f.active = map[*os.File]bool{}
	}
	f.active[w] = true
	f.wg.Add(1)
	return true
}

func (f *floodSet) remove(w *os.File) {
	f.mu.Lock()
	delete(f.active, w)
	f.mu.Unlock()
	f.wg.Done()
}

// end cuts every flood short and waits for their writers to return.
func (f *floodSet) end() {
	f.mu.Lock()
	f.ended = true
	for w := range f.active {
		_ = w.SetWriteDeadline(time.Now())
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// mayBlock reports whether a flood into w can block and so hold the
// server's output: w is a pipe, socket or terminal (floodTarget may still
// fail to open it anew, which is then recorded).
func mayBlock(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && !info.Mode().IsRegular()
}

// floodTarget opens the client's view of the server's stderr anew, so that
// the flood's writes can have a deadline without touching the descriptor
// the relay shares with the rest of the process. A pipe (or terminal) opened
// through /proc/self/fd is a new open file in the runtime poller; the
// inherited descriptor usually is not.
func floodTarget(w io.Writer) (*os.File, string) {
	f, ok := w.(*os.File)
	if !ok {
		return nil, "the stderr given to the relay is not a file, so a blocked write could not be cut short"
	}
	info, err := f.Stat()
	if err == nil && info.Mode().IsRegular() {
		return nil, "the client's view of the server's stderr is a regular file, which never blocks a writer"
	}
	t, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Sprintf("cannot open the client's stderr pipe anew to give the flood a deadline: %v", err)
	}
	if err := t.SetWriteDeadline(time.Time{}); err != nil {
		t.Close()
		return nil, fmt.Sprintf("the client's stderr pipe does not support write deadlines: %v", err)
	}
	return t, ""
}

func (s *session) stderrFlood(label string, fl *faults.StderrFlood) {
	skip := func(why string) {
		s.record(wire.Event{Type: wire.EventFault, Fault: label, Action: "stderr-flood", Pipe: wire.PipeServerStderr, Detail: "skipped: " + why})
	}
	if s.cfg.Stderr == nil {
		skip("the relay passes the server's stderr to nobody (no Config.Stderr), so there is no reader to flood")
		return
	}
	w, why := floodTarget(s.cfg.Stderr)
	if w == nil {
		skip(why)
		return
	}
	deadline := time.Now().Add(fl.Timeout)
	if err := w.SetWriteDeadline(deadline); err != nil {
		w.Close()
		skip(err.Error())
		return
	}
	if !s.floods.add(w) {
		w.Close()
		skip("the session has ended")
		return
	}
	if fl.Block {
		s.gates[wire.ToClient].hold()
	}
	go func() {
		defer s.floods.remove(w)
		defer w.Close()
		if fl.Block {
			defer s.gates[wire.ToClient].release()
		}
		start := time.Now()
		written, lines := 0, fl.Lines()
		var err error
		var longest time.Duration // the longest one write blocked
		for n := 0; n < lines && err == nil; n++ {
			var k int
			t0 := time.Now()
			k, err = w.Write(fl.Text(n))
			written += k
			longest = max(longest, time.Since(t0))
		}
		took := time.Since(start).Round(time.Millisecond)
		var detail string
		switch {
		case err == nil && longest < floodStalled:
			detail = fmt.Sprintf("wrote %d bytes of log lines to the client's stderr pipe in %s: the reader kept up", written, took)
		case err == nil:
			detail = fmt.Sprintf("wrote %d bytes of log lines to the client's stderr pipe in %s: the reader stalled (a write blocked for %s), then caught up", written, took, longest.Round(time.Millisecond))
		case errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(deadline):
			detail = fmt.Sprintf("wrote %d of %d bytes to the client's stderr pipe before the session ended: the reader stalled, the write blocked", written, fl.Bytes)
		case errors.Is(err, os.ErrDeadlineExceeded):
			detail = fmt.Sprintf("wrote %d of %d bytes to the client's stderr pipe, then gave up after %s: the reader stalled, the write blocked", written, fl.Bytes, fl.Timeout)
		default:
			detail = fmt.Sprintf("wrote %d of %d bytes to the client's stderr pipe, then the write failed: %v", written, fl.Bytes, err)
		}
		if fl.Block {
			detail += "; the server's output was held meanwhile"
		}
		s.record(wire.Event{Type: wire.EventFault, Fault: label, Action: "stderr-flood", Pipe: wire.PipeServerStderr, Size: written, Detail: detail})
	}()
}

// --- linger ---

// lingerState is a linger fault: once armed, the client's EOF and the
// SIGTERM or SIGINT that mcpchaos wrap gets are ignored for a while, counted
// from the first of them; then the shutdown they asked for starts.
type lingerState struct {
	mu      sync.Mutex
	armed   bool
	d       time.Duration // 0: until killed
	label   string
	started bool
	ends    time.Time
}

func (s *session) armLinger(label string, d time.Duration) {
	s.linger.mu.Lock()
	defer s.linger.mu.Unlock()
	if s.linger.started {
		return // the first linger that began runs its course
	}
	s.linger.armed, s.linger.d, s.linger.label = true, d, label
}

// postpone reports whether a linger puts off the shutdown that why asks
// for; if so, the shutdown starts when the linger ends.
func (s *session) postpone(why string) bool {
	s.linger.mu.Lock()
	defer s.linger.mu.Unlock()
	l := &s.linger
	if !l.armed || l.d > 0 && l.started && !time.Now().Before(l.ends) {
		return false
	}
	if l.d == 0 {
		// Until killed: only SIGKILL, which cannot be ignored, ends wrap.
		l.started = true
		s.record(wire.Event{Type: wire.EventFault, Fault: l.label, Action: "linger",
			Detail: fmt.Sprintf("ignored (%s): the linger lasts until mcpchaos is killed", why)})
		return true
	}
	left := time.Until(l.ends)
	if !l.started {
		l.started, l.ends, left = true, time.Now().Add(l.d), l.d
		s.goBackground(func() {
			t := time.NewTimer(left)
			defer t.Stop()
			select {
			case <-t.C:
				s.record(wire.Event{Type: wire.EventFault, Fault: l.label, Action: "linger", Detail: "the linger ends: shutting down as asked (" + why + ")"})
				s.shutdown(why)
			case <-s.done:
			}
		})
	}
	s.record(wire.Event{Type: wire.EventFault, Fault: l.label, Action: "linger",
		Detail: fmt.Sprintf("ignored (%s): the linger lasts %s more", why, left.Round(time.Millisecond))})
	return true
}

// IgnoreSignal reports whether the session ignores sig now: a linger fault
// makes mcpchaos wrap deaf to SIGTERM and SIGINT for a while, as a server
// that does not go when told. The signal is recorded either way it goes.
// SIGKILL cannot be ignored; wrap's children die with it (their parent-death
// signal), which is what a client escalating to SIGKILL relies on.
func (h *Session) IgnoreSignal(sig os.Signal) bool {
	if sig != syscall.SIGTERM && sig != syscall.SIGINT {
		return false
	}
	return h.s.postpone("mcpchaos got " + osSignalName(sig))
}

// osSignalName is SignalName for a signal as os/signal delivers it.
func osSignalName(sig os.Signal) string {
	if ss, ok := sig.(syscall.Signal); ok {
		return SignalName(ss)
	}
	return sig.String()
}

// Interrupts ends the session on each signal from sigs that IgnoreSignal
// does not ignore, by calling interrupt with why; it returns when the session
// has ended. mcpchaos wrap runs it on SIGTERM and SIGINT.
func (h *Session) Interrupts(sigs <-chan os.Signal, interrupt func(why error)) {
	for {
		select {
		case sig := <-sigs:
			if h.IgnoreSignal(sig) {
				continue
			}
			interrupt(errors.New("got " + osSignalName(sig)))
		case <-h.done:
			return
		}
	}
}
