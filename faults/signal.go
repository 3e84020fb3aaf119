package faults

import (
	"fmt"
	"time"
)

// signal is the server process being told to die, killed outright, or frozen:
// what an OOM killer, a supervisor or a laptop lid does to a server in the
// middle of a call. A client must notice the death (its pipes end) or, for a
// freeze, wait or time out, and answer nothing it was never answered.
var signalFamily = &Family{
	Name:  "signal",
	Doc:   "send a signal to the server's process group: TERM or INT ask it to stop, KILL ends it, STOP freezes it for a while and then continues it (SIGCONT)",
	Phase: After,
	Params: []Param{
		{Name: "sig", Type: TypeChoice, Choices: []string{"TERM", "KILL", "INT", "STOP"}, Default: "TERM", Doc: "the signal to send"},
		{Name: "for", Type: TypeDuration, Default: "2s", Doc: "how long STOP freezes the server before SIGCONT (only with sig=STOP); the shutdown continues it at once"},
	},
	New: func(v Values) (Action, error) {
		s := signalFault{name: "SIG" + v.String("sig")}
		// for= is ignored by the signals that are sent once: its default
		// must parse with any sig=.
		if s.name == "SIGSTOP" {
			s.d = v.Duration("for")
			if s.d <= 0 {
				return nil, fmt.Errorf("for: a STOP must last longer than 0s")
			}
		}
		return s, nil
	},
	Example: "signal:on=c2s:request:tools/call,sig=STOP,for=3s",
}

type signalFault struct {
	name string        // "SIGTERM"
	d    time.Duration // how long a SIGSTOP lasts
}

func (s signalFault) Fire(*FireContext) Effect {
	detail := "send " + s.name + " to the server's process group"
	if s.d > 0 {
		detail += fmt.Sprintf(", and SIGCONT %s later", s.d)
	}
	return Effect{Signal: &Signal{Name: s.name, For: s.d}, Detail: detail}
}

// Signal is a signal for the server's process group.
type Signal struct {
	// Name is SIGTERM, SIGKILL, SIGINT or SIGSTOP.
	Name string
	// For is how long a SIGSTOP lasts before SIGCONT; the shutdown ladder
	// continues the server first, whatever is left of it.
	For time.Duration
}
