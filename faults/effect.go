package faults

import (
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// Phase is when a fault fires relative to forwarding the message that
// triggered it.
type Phase uint8

const (
	// Before fires before the triggering message is forwarded.
	Before Phase = iota + 1
	// After fires once the triggering message has been forwarded.
	After
)

func (p Phase) String() string {
	if p == After {
		return "after"
	}
	return "before"
}

// Injection is one frame the transport writes toward Dir's receiver.
type Injection struct {
	Dir wire.Direction
	Raw []byte // a complete frame, newline included
	// Gap is how long to wait before writing this frame.
	Gap time.Duration
}

// Stall asks the transport to stop reading frames travelling in Dir.
type Stall struct {
	Dir wire.Direction
	// For is how long; 0 stalls until the session ends.
	For time.Duration
	// ShrinkPipe asks for the OS pipe under Dir to be made as small as the
	// kernel allows, so the sender's writes block after a page, not 64 KiB.
	ShrinkPipe bool
}

// Effect is what a fired fault asks the transport to do. The zero Effect does
// nothing and forwards the message.
type Effect struct {
	Inject []Injection
	Stall  *Stall
	// CloseServerInput closes the server's stdin (early EOF).
	CloseServerInput bool
	// HalfClose closes our read end of the pipe carrying Dir, so the peer
	// sending in that direction gets EPIPE while the other direction flows.
	HalfClose wire.Direction
	// Delay holds the triggering message this long before it is forwarded
	// (or, fired after forwarding, before the next one is read).
	Delay time.Duration
	// Drop withholds the triggering message: it is never forwarded.
	Drop bool
	// Replace, when not nil, is written instead of the triggering message,
	// which is then never forwarded. It may hold several lines or none.
	Replace []byte
	// Rewrite, when not nil, is forwarded instead of the triggering
	// message's bytes: the same message with its id changed by an id fault
	// (the receiver owes it an answer as it would the original). Drop and
	// Replace take precedence over it.
	Rewrite []byte
	// Copies forwards the triggering message this many extra times, right
	// after the original.
	Copies int
	// Detail says, in words, what was decided; it goes into the transcript.
	Detail string
	// Skipped is set when the fault fired but found nothing to act on (a
	// progress burst with no token to report on). A skipped firing is
	// recorded but does not count toward times=, so a later message can
	// still get the fault.
	Skipped bool
}
