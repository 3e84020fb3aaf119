package chaos

import (
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// The record helpers do nothing without a Recorder, so a session without
// --transcript pays nothing for events.

func (s *session) record(e wire.Event) int64 {
	if s.rec == nil {
		return 0
	}
	return s.rec.Record(e)
}

func (s *session) recordMessage(typ string, dir wire.Direction, m *wire.Message, fault string, of int64) int64 {
	if s.rec == nil {
		return 0
	}
	e := wire.Event{Type: typ, Fault: fault, Of: of}
	e.SetMessage(dir, m)
	return s.rec.Record(e)
}

func (s *session) recordRef(typ string, dir wire.Direction, of int64, detail string) {
	if s.rec == nil {
		return
	}
	s.rec.Record(wire.Event{Type: typ, Dir: dir.String(), Of: of, Detail: detail})
}

func (s *session) recordPipe(pipe, detail string, byUs bool) {
	s.record(wire.Event{Type: wire.EventPipeClosed, Pipe: pipe, Detail: detail, ByUs: byUs})
}

func (s *session) recordSignal(sig, why string) {
	s.record(wire.Event{Type: wire.EventSignal, Signal: sig, PID: s.proc.PID(), Detail: why, ByUs: true})
}

func (s *session) recordStart() {
	if s.rec == nil {
		return
	}
	e := wire.Event{Type: wire.EventSession, Command: s.cfg.Command, Tool: s.cfg.Tool, Format: wire.TranscriptFormat,
		Scenario: s.cfg.Scenario, Role: s.cfg.Role, DeadlineMS: s.cfg.Deadline.Milliseconds(),
		MaxDeadlineMS: s.cfg.MaxDeadline.Milliseconds(), HangAfterMS: s.cfg.HangAfter.Milliseconds(),
		GraceMS: s.cfg.Grace.Milliseconds(), Repro: s.cfg.Repro, Expect: s.cfg.Expect,
		// Lets test-client place its own events about the client on our clock.
		WallStartUnixNano: time.Now().UnixNano() - s.rec.Now()*1000}
	if s.cfg.Plan != nil {
		seed := s.cfg.Plan.Seed()
		e.Seed = &seed
		for _, f := range s.cfg.Plan.Faults() {
			e.Faults = append(e.Faults, f.Spec)
		}
	}
	s.rec.Record(e)
	s.rec.Record(wire.Event{Type: wire.EventProcessStarted, PID: s.proc.PID(), Command: s.cfg.Command})
}

func (s *session) recordExit(res *Result) {
	s.record(wire.Event{Type: wire.EventProcessExited, PID: s.proc.PID(), ExitCode: res.ExitCode, Signal: res.Signal, ByUs: res.SignalledByUs && res.Signal != ""})
}
