package wire

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Event types of the transcript. The transcript is the judge's only input, so
// these names are a contract: add new ones, never change what one means.
const (
	// EventSession opens every transcript: seed, command, fault specs.
	EventSession = "session"
	// EventReceived is a frame read from a peer, with its bytes.
	EventReceived = "received"
	// EventForwarded is a received frame written on to the other peer
	// unchanged; Of names the received event. A frame an id fault rewrote
	// on its way (or an answer translated back to its request's original
	// id) is the exception: its forwarded event carries the bytes written
	// and their classification (Kind, ID...), and Detail says why, so that
	// the transcript holds what each peer got.
	EventForwarded = "forwarded"
	// EventInjected is a frame mcpchaos wrote that no peer sent, with its bytes.
	EventInjected = "injected"
	// EventDropped is a received frame that was never forwarded; Of names it.
	EventDropped = "dropped"
	// EventFault is a decision a fault took (or declined to take), with why.
	// An id fault (id-type, id-collision) that sends a request on under
	// another id records, before the write, that id (ID) and the request's
	// direction (Dir), so that an answer recorded early finds its request.
	EventFault = "fault"
	// EventPipeClosed is one end of one pipe closing (Pipe names it).
	EventPipeClosed = "pipe-closed"
	// EventProcessStarted and EventProcessExited bracket the child's life.
	EventProcessStarted = "process-started"
	EventProcessExited  = "process-exited"
	// EventSignal is a signal mcpchaos sent to the child's process group.
	EventSignal = "signal"
	// EventProbe is a liveness probe mcpchaos sent (ping, or server/discover
	// in the stateless era) to tell a stuck receive loop from a slow handler.
	// Its id starts with ProbeIDPrefix; the answer is recorded as received
	// and then dropped, never forwarded.
	EventProbe = "probe"
	// EventStderr is one line the child wrote to stderr.
	EventStderr = "stderr"
	// EventError is something that went wrong on the relay's side of a pipe
	// (a write that failed, a line over the size cap).
	EventError = "error"
	// EventSessionEnd closes every complete transcript.
	EventSessionEnd = "session-end"
	// EventHTTP is the head of an HTTP exchange of an HTTP session: a
	// request reaching the proxy (HTTP, Exchange), the upstream's response
	// head (Status, Detail: its content type), a stream ending (Detail
	// says how), or an SSE event with no message (a priming event, the
	// legacy transport's endpoint).
	EventHTTP = "http"
	// EventForeign is a request mcpchaos sent the server as a page of a
	// foreign site would through DNS rebinding (fault foreign-origin), on
	// an exchange of its own, with what the server answered: Forged names
	// what was forged (host, origin, null-origin, rebinding), Detail the
	// Host and Origin sent, Method the request's, Status the answer's HTTP
	// status, MCPSession a session id it issued, Kind the answer's message
	// kind ("" for none) and Raw the answer's message, or the response
	// body when it held none. No peer sees any of it.
	EventForeign = "foreign"
	// EventListening is where an HTTP server mcpchaos started listens, as
	// the system tells once it answers: Detail is its addresses (host:port,
	// comma-separated).
	EventListening = "listening"
	// EventCPUShare is the share of a core a process that wants the CPU got
	// from then on (CPUShare, in thousandths), recorded when it changes:
	// the judge counts deadlines at it, as the probe did, so that a peer
	// slowed by its neighbours on a busy machine is not judged hung. A
	// transcript without one was made on a machine taken as idle.
	EventCPUShare = "cpu-share"
)

// TranscriptFormat numbers the ways of writing a transcript that a reader
// must know of to get every frame back. Format 4 may store a run of SSE
// events the HTTP proxy relayed untouched as the server sent them, after
// a line that stands for their messages' events (AppendRelayedEventsHead):
// the reader frames them. Format 3 may store received frames
// as their bytes, unescaped and unread, after a line that stands for their
// events (AppendRelayedHead): the reader cuts and classifies them. Format 2
// stores a frame that is one line of well-formed JSON-RPC as the message
// member; format 1, which has no number in its session event, stored every
// frame in raw or raw_b64. A reader refuses a transcript in a format newer
// than it knows rather than judge frames it cannot see.
const TranscriptFormat = 4

// GroupCleanupDetail is the detail of the SIGKILL mcpchaos sends the
// server's process group once the server has exited, so that nothing it left
// behind (npx's node, a shell's child) holds the pipes. It ends no server:
// the judge must not read it as the shutdown ladder's SIGKILL, although the
// relay records it before the exit it follows.
const GroupCleanupDetail = "the server exited and left processes in its group"

// NotLanded starts the detail of a fault event that says a firing did not
// land: the fault fired, but by the time its effect reached the peer what
// it needed was gone (an id collision's borrowed request had been answered,
// or over HTTP refused with an error status, before the borrower went on).
// The judge takes a scenario whose faults fired and never landed for one
// that tested nothing, as it does one whose faults never fired.
const NotLanded = "did not land"

// ProbeIDPrefix starts the JSON text of every liveness probe's id. The ids
// are strings so that they can never collide with a peer's numeric ids.
const ProbeIDPrefix = `"mcpchaos-probe-`

// MetaGrowth is the _meta member of each request of a growth series (the
// probe's: the same request at growing input sizes), which the judge reads
// to tell how the answer time grows with the input: {"series": a name the
// series' requests share, "step": 0, 1, ..., "size": the grown input's
// length in bytes}. A reverse-DNS prefix, as MCP asks of _meta keys.
const MetaGrowth = "dev.mcpchaos/growth"

// InjectIDPrefix starts the JSON text of the id of every request a fault
// injects (server-request, early-request). The relay swallows the answers,
// so the other peer never sees an answer it did not ask for; the judge holds
// the receiver to answering them like any other request.
const InjectIDPrefix = `"mcpchaos-inject-`

// Pipe names, as seen from the child process.
const (
	PipeClientInput  = "client-stdin"  // what the client writes to us (our stdin)
	PipeClientOutput = "client-stdout" // what we write to the client (our stdout)
	PipeServerInput  = "server-stdin"  // what we write to the child
	PipeServerOutput = "server-stdout" // what the child writes to us
	PipeServerStderr = "server-stderr"
)

// Event is one line of the transcript. T is microseconds since the session
// started, from a monotonic clock. Fields that do not apply are omitted.
type Event struct {
	Seq  int64  `json:"seq"`
	T    int64  `json:"t_us"`
	Type string `json:"type"`

	Dir           string `json:"dir,omitempty"`
	Kind          string `json:"kind,omitempty"`
	ID            string `json:"id,omitempty"`
	Method        string `json:"method,omitempty"`
	ProgressToken string `json:"progress_token,omitempty"`
	Era           string `json:"era,omitempty"`
	Problem       string `json:"problem,omitempty"`
	Size          int    `json:"size,omitempty"`
	// Raw holds the frame's bytes when they are valid UTF-8; RawBase64 holds
	// them otherwise, so that no byte a peer sent is lost from the record.
	Raw       string `json:"raw,omitempty"`
	RawBase64 string `json:"raw_b64,omitempty"`
	// Of is the Seq of the received event this one refers to.
	Of int64 `json:"of,omitempty"`

	Fault  string `json:"fault,omitempty"`
	Spec   string `json:"spec,omitempty"`
	Action string `json:"action,omitempty"`
	Detail string `json:"detail,omitempty"`
	// UntilUS is when a stall fault's hold ends (same clock as T); Forever
	// is set instead for a stall that lasts until the session ends.
	UntilUS int64 `json:"until_us,omitempty"`
	Forever bool  `json:"forever,omitempty"`
	// CPUShare is a cpu-share event's share of a core, in thousandths.
	CPUShare int `json:"cpu_share,omitempty"`

	Pipe    string   `json:"pipe,omitempty"`
	PID     int      `json:"pid,omitempty"`
	Command []string `json:"command,omitempty"`
	// ExitCode is set when the process exited on its own; Signal when a signal ended it.
	ExitCode *int   `json:"exit_code,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// ByUs is set on an exit or closing that mcpchaos caused, and on an
	// HTTP status mcpchaos answered itself, which the server never saw.
	ByUs bool `json:"by_us,omitempty"`

	Seed   *uint64  `json:"seed,omitempty"`
	Faults []string `json:"faults,omitempty"`
	Tool   string   `json:"tool,omitempty"`
	// Format, on the session event, is the TranscriptFormat the transcript
	// was written in; transcripts from before it existed have none.
	Format int `json:"format,omitempty"`
	// Session facts the judge needs offline: the scenario's name, the peer
	// under test ("server", "client", or empty when both are real), the
	// request deadline and shutdown grace in milliseconds, and the command
	// line that replays the session.
	Scenario   string `json:"scenario,omitempty"`
	Role       string `json:"role,omitempty"`
	DeadlineMS int64  `json:"deadline_ms,omitempty"`
	// MaxDeadlineMS caps how far progress notifications may push a
	// request's deadline: each one restarts it, up to this long after the
	// request was sent (MCP, Lifecycle: Timeouts).
	MaxDeadlineMS int64 `json:"max_deadline_ms,omitempty"`
	GraceMS       int64 `json:"grace_ms,omitempty"`
	// HangAfterMS, when a client program is under test, is its hang
	// horizon: past DeadlineMS it is late, and only still running at this
	// is it hung (it may be waiting out its SDK's own request timeout).
	HangAfterMS int64  `json:"hang_after_ms,omitempty"`
	Repro       string `json:"repro,omitempty"`
	// Expect is, when the client is under test, what its program must do
	// under this scenario's faults: "success" (the calls stay answerable)
	// or "failure" (a call became impossible: it must fail promptly).
	Expect string `json:"expect,omitempty"`
	// Peer names whose process a process-started, process-exited, signal
	// or stderr event is about: "client" for the client program that
	// test-client runs; empty for the server.
	Peer string `json:"peer,omitempty"`
	// WallStartUnixNano, on the session event, is the wall-clock time at
	// which T was 0, so that events of other processes can be merged.
	WallStartUnixNano int64 `json:"wall_start_unix_ns,omitempty"`
	// Session and Sessions, on the session event of a run with several
	// sessions against one server, say which of them this transcript
	// records (1 is the first) and how many there were; Marker is the
	// token that session's client put in what it sent (its clientInfo
	// name, progress tokens and string arguments), so that a message
	// carrying it on another session's streams is known for that
	// session's. A transcript of a run of one session has none of them.
	Session  int    `json:"session,omitempty"`
	Sessions int    `json:"sessions,omitempty"`
	Marker   string `json:"marker,omitempty"`
	// URLTemplate, on the session event of a run on a port of its own
	// (mcpchaos test --url with {port}), is the URL as the user wrote it:
	// the runs of one target differ in URL, not in URLTemplate.
	URLTemplate string `json:"url_template,omitempty"`

	// HTTP context, on the events of an HTTP session (mcpchaos proxy).
	// Exchange numbers the HTTP request a message travelled in or answered
	// on (1, 2, ... in the order requests reached the proxy); HTTP is its
	// request line ("POST /mcp"); Status is the upstream's status code, on
	// the http event that records the response head; EventID is the SSE
	// event id a server message carried; MCPSession is the Mcp-Session-Id
	// header of the exchange; URL, on the session event, is the upstream.
	Exchange   int64  `json:"exchange,omitempty"`
	HTTP       string `json:"http,omitempty"`
	Status     int    `json:"status,omitempty"`
	EventID    string `json:"event_id,omitempty"`
	MCPSession string `json:"mcp_session,omitempty"`
	URL        string `json:"url,omitempty"`
	// Forged, on a foreign event, names what the request forged, and on
	// the http event of fault forge-origin what it forged of the client's
	// own request; Challenge is the WWW-Authenticate header of the
	// server's answer.
	Forged    string `json:"forged,omitempty"`
	Challenge string `json:"challenge,omitempty"`
	// Cut, on the http event of a fault cutting an exchange's connection,
	// says which sides it ended: "both" when the server's side closed too
	// (what the server still had to send there never arrives), "client"
	// when the server's side was left open and read into the record, or
	// none was open.
	Cut string `json:"cut,omitempty"`
	// Standalone, on the http event of a GET reaching the proxy, marks the
	// client's stream for the server's own messages (on the legacy
	// transport, its one stream), as opposed to the resumption of a POST's
	// stream: it has no Last-Event-ID, or one a standalone stream gave.
	Standalone bool `json:"standalone,omitempty"`
}

// Values of Event.Cut.
const (
	CutBoth   = "both"
	CutClient = "client"
)

// SetRaw stores b losslessly: as text when it is UTF-8, as base64 when not.
// It replaces whatever an earlier SetRaw stored in e.
func (e *Event) SetRaw(b []byte) {
	e.Size = len(b)
	if utf8.Valid(b) {
		e.Raw, e.RawBase64 = string(b), ""
		return
	}
	e.Raw, e.RawBase64 = "", base64.StdEncoding.EncodeToString(b)
}

// Bytes returns the frame bytes SetRaw stored.
func (e *Event) Bytes() ([]byte, error) {
	if e.RawBase64 != "" {
		return base64.StdEncoding.DecodeString(e.RawBase64)
	}
	return []byte(e.Raw), nil
}

// SetMessage copies m's classification and bytes into e.
func (e *Event) SetMessage(dir Direction, m *Message) {
	e.Dir = dir.String()
	e.Kind = m.Kind.String()
	e.ID = m.ID
	e.Method = m.Method
	e.ProgressToken = m.ProgressToken
	e.Era = m.Era.String()
	e.Problem = m.Problem
	e.SetRaw(m.Raw)
}

// MarshalLine encodes e as one JSONL line, newline included.
func (e *Event) MarshalLine() ([]byte, error) {
	return e.AppendLine(nil), nil
}

// ExitWords says how a process-exited event ended the process: "exited
// with status 1", "was killed by SIGTERM".
func (e *Event) ExitWords() string {
	switch {
	case e.Signal != "":
		return "was killed by " + e.Signal
	case e.ExitCode != nil:
		return "exited with status " + strconv.Itoa(*e.ExitCode)
	}
	return "exited"
}

// UnmarshalJSON reads an event as AppendLine writes it: a frame stored as
// the message member comes back in Raw, its bytes unchanged, with the
// newline it ended with when it is a stdio line (an event of no HTTP
// exchange).
func (e *Event) UnmarshalJSON(b []byte) error {
	_, err := decodeLine(b, e)
	return err
}

// frameRef is what an event's line (format 3) says of the frames stored
// after it: their length in bytes, how many, and whether the line stands
// for each frame's forwarded event (the next seq, at the same time) too.
type frameRef struct {
	Bytes     *int `json:"bytes"`
	Frames    int  `json:"frames"`
	Forwarded bool `json:"forwarded"`
	// SSE says the bytes are SSE events as a server sent them, a frame
	// being each event's data (format 4, AppendRelayedEventsHead).
	SSE bool `json:"sse"`
}

// decodeLine reads an event's line into e, and what it says of a frame
// stored after it.
func decodeLine(b []byte, e *Event) (frameRef, error) {
	type fields Event // without UnmarshalJSON
	v := struct {
		*fields
		Message json.RawMessage `json:"message"`
		frameRef
	}{fields: (*fields)(e)}
	if err := json.Unmarshal(b, &v); err != nil {
		return frameRef{}, err
	}
	if len(v.Message) > 0 {
		e.Raw = string(v.Message)
		if e.Exchange == 0 {
			// A stdio frame is a line: the newline framed it.
			e.Raw += "\n"
		}
	}
	return v.frameRef, nil
}
