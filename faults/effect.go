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
	// Hold keeps the triggering message back and forwards it later, when
	// Hold.Until says (reorder). Copies go with it.
	Hold *Hold
	// InjectAfter frames are written right after the triggering message has
	// been forwarded (at once when the fault fires after forwarding).
	InjectAfter []Injection
	// Fragment writes the triggering message in pieces with pauses between
	// them, instead of in one write.
	Fragment *Fragment
	// Throttle paces every frame written in a direction from now on.
	Throttle *Throttle
	// Skipped is set when the fault fired but found nothing to act on (a
	// progress burst with no token to report on). A skipped firing is
	// recorded but does not count toward times=, so a later message can
	// still get the fault.
	Skipped bool
	// Signal asks for a signal to the server's process group.
	Signal *Signal
	// StderrFlood asks for log text written to the server's stderr as the
	// client reads it.
	StderrFlood *StderrFlood
	// Linger asks the session to put off its shutdown when the client ends it.
	Linger *Linger
	// Respond asks an HTTP transport to answer the client's request itself
	// (an error status, or a reset connection) instead of sending it on.
	Respond *Respond
	// EndSession asks an HTTP transport to end the client's session at the
	// server (DELETE with its Mcp-Session-Id).
	EndSession bool
	// ForgetSession asks an HTTP transport to make the server forget the
	// client's session: from now on, requests carrying its Mcp-Session-Id
	// go on with one the server never issued.
	ForgetSession *ForgetSession
	// HoldHead asks an HTTP transport to hold the head of the server's
	// answer before it goes to the client.
	HoldHead *HoldHead
	// Foreign asks an HTTP transport to send the server, on exchanges of
	// its own, the handshake of a page of a foreign site, one for each of
	// ForeignForgeries named (foreign-origin).
	Foreign []string
	// Credentials asks an HTTP transport to send the server requests with
	// the client's credentials changed (credentials).
	Credentials *Credentials
	// ForgeOrigin asks an HTTP transport to send the client's own request
	// on with the Host and Origin of the ForeignForgeries it names
	// (forge-origin).
	ForgeOrigin string
	// ReuseEventID asks an HTTP transport to send the triggering event
	// with the id of the event before it in the same stream.
	ReuseEventID bool
	// Stream, when StreamGET, points what the fault does on HTTP (a cut, a
	// reset, a stall, injections toward the client) at the client's open
	// standalone GET stream instead of at the triggering message's
	// exchange; "" is the exchange (for a stall, the whole direction).
	Stream string
	// KeepServerSide asks an HTTP cut (CloseServerInput, Respond.Reset) to
	// leave the server's side of the connection open and read what the
	// server still sends into the record, instead of closing it as a real
	// network cut does.
	KeepServerSide bool
}

// ForgetSession is how an HTTP transport forges the id that replaces the
// client's session id.
type ForgetSession struct {
	// Seed draws the forged id (ForgeSessionID), so that a replay forges
	// the same one.
	Seed uint64
}

// StreamGET is Effect.Stream for the client's standalone GET stream: the
// one it opens for the server's own messages (on the legacy transport, its
// one stream).
const StreamGET = "get"

// HoldHead is how long an HTTP transport holds a response head.
type HoldHead struct {
	// For is how long; 0 holds it until the client or the session ends.
	For time.Duration
}

// Respond is how an HTTP transport answers a request in the server's place.
type Respond struct {
	// Status is the HTTP error status to answer with.
	Status int
	// Reset resets the connection (TCP RST) instead of answering.
	Reset bool
}

// HoldUntil says what releases a held message.
type HoldUntil uint8

const (
	// UntilNext releases the held message right after the next message
	// travelling the same way has been forwarded: the two arrive swapped.
	UntilNext HoldUntil = iota + 1
	// UntilAnswer releases it right after the answer to request AnswerID,
	// travelling the same way, has been forwarded.
	UntilAnswer
)

// Hold asks the transport to keep the triggering message back. Whatever
// happens it is released after Max, or when the session ends (recorded as
// dropped if its pipe is closed by then): a held message is never lost
// silently.
type Hold struct {
	Until HoldUntil
	// AnswerID is the JSON text of the request id whose answer releases the
	// message (UntilAnswer).
	AnswerID string
	// Token, with UntilAnswer, holds every later notifications/progress for
	// this progress token (JSON text) travelling the same way along with it.
	Token string
	Max   time.Duration
}

// Fragment splits a frame into partial writes.
type Fragment struct {
	// Cuts are the byte offsets where each piece but the last ends,
	// ascending, each between 1 and len(frame)-1; the line ending always
	// travels in the last piece.
	Cuts []int
	// Gap is the pause between two pieces.
	Gap time.Duration
}

// Throttle paces the writes of one direction.
type Throttle struct {
	Dir wire.Direction
	// Rate is in bytes per second.
	Rate int64
	// For is how long; 0 is the rest of the session.
	For time.Duration
}
