package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// The two MCP eras, as Outcome.Era and Config.Era spell them (the same names
// the transcript uses).
const (
	EraStateful  = "stateful"
	EraStateless = "stateless"
)

// Protocol revisions the probe speaks: the stateless core when the server
// offers it, else the last revision with the initialize handshake.
const (
	StatelessVersion = "2026-07-28"
	StatefulVersion  = "2025-11-25"
)

const (
	defaultConcurrency = 3
	defaultDeadline    = 5 * time.Second
	defaultMaxDeadline = 60 * time.Second
	defaultClientName  = "mcpchaos-probe"
	clientVersion      = "0.1.0"

	// maxGrace caps how long the probe waits for server/discover, and how
	// much longer it waits for an overdue answer: long enough for a server
	// that is merely slow, short enough that a hung one does not dominate the
	// run.
	maxGrace = 2 * time.Second
	// drainWait is how long the server's output is read after its stdin is
	// closed, so that late answers and shutdown behaviour reach the transport.
	drainWait = 2 * time.Second
	// closeWait bounds the wait for the reading and writing goroutines once
	// their pipe has been closed under them.
	closeWait = time.Second
	// maxListPages bounds pagination, so a server that hands out cursors for
	// ever cannot keep the probe listing.
	maxListPages = 20
)

// Call is one tool call to make: Tool name and its JSON arguments object.
type Call struct {
	Tool string
	// Args is the arguments object; nil means {}.
	Args json.RawMessage
}

// Config says what one probe session does. The zero value is valid.
type Config struct {
	// Calls are explicit calls (from --call NAME=JSON); nil means: call every
	// listed tool with arguments generated from its inputSchema (Arguments).
	Calls []Call
	// SkipTools are tool names never called, explicit Calls included.
	SkipTools []string
	// MinCalls repeats the calls, in order, until at least this many are
	// made: faults that need several requests in flight at once (early EOF
	// with handlers running) must get them from a server with one tool.
	MinCalls int
	// Concurrency is how many tool calls are in flight at once (default 3).
	// Every call carries a progress token.
	Concurrency int
	// Deadline is how long each request may stay unanswered (default 5s).
	// A progress notification for the request restarts it (MCP, Lifecycle:
	// Timeouts), so a slow tool that reports progress is waited for.
	Deadline time.Duration
	// MaxDeadline is the longest progress may keep a request waited for,
	// counted from when it was sent (default 60s, never below Deadline).
	MaxDeadline time.Duration
	// Overdue, if set, is called once for each request that passes its
	// deadline unanswered, with its JSON id text and method; the transport
	// answers it by sending a liveness probe. It must not block. Calls are
	// never concurrent, and none happens after Run returns. A request still
	// stuck in a write to w is not reported: the server never got it.
	Overdue func(id, method string)
	// Share, if set, is the share of a core (0 to 1) a process that wants
	// the CPU gets now: deadlines and graces are counted at it, so that on
	// a machine whose cores are all taken a server is given the time it
	// would have had alone (machine.Share; nil counts wall time). The wall
	// time a request is waited for stays capped by MaxDeadline.
	Share func() float64
	// ClientName is the clientInfo name (default "mcpchaos-probe", or the
	// Marker when there is one).
	ClientName string
	// Marker, in a run of several sessions against one server, is this
	// session's own token: its clientInfo name, the stem of its progress
	// tokens, and every free string of its generated tool arguments, so
	// that what reaches another session carrying it is known for this
	// session's (see MarkedArguments). Empty in a run of one session.
	Marker string
	// Session is this session's number in a run of several (1 is the
	// first; 0 in a run of one): session K subscribes to the Kth resource
	// it could read (in turn), so that an update delivered to a session
	// that never subscribed to its resource shows whose it was; and the
	// sessions after the first set logging/setLevel to debug, the first to
	// info, so that one level kept for every session shows in the first.
	Session int
	// LevelAfter, when set, is waited on (at most Deadline) before this
	// session's logging/setLevel, and LevelSet is called once this
	// session's is answered or given up on (or there is none to send): in
	// a run of several sessions, the sessions after the first set their
	// level once the first has set its own, so that a server keeping one
	// level for every session ends at theirs, and shows it in the first.
	LevelAfter <-chan struct{}
	LevelSet   func()
	// Seed chooses the samples of long listings (resources to read,
	// prompts to get): the same seed, the same choice.
	Seed uint64
	// Hostile is the hostile workload sent after the rest (HostileSample,
	// HostileWide; "" sends none): requests no polite client sends, which
	// the server must answer all the same.
	Hostile string
	// Era is "" to negotiate (server/discover, falling back to initialize)
	// or EraStateful to skip server/discover and use the initialize
	// handshake, for servers that support both.
	Era string
}

// Outcome is what one session did, as the probe saw it. The transcript is the
// authority on what crossed the wire; this is for the caller's own checks
// (did the baseline work, which tools exist).
type Outcome struct {
	// Era is EraStateful or EraStateless; empty if discovery never ended.
	Era             string
	ProtocolVersion string
	ServerName      string
	// Tools are the tool names as listed by the server.
	Tools []string
	// TaskOnlyTools are the listed tools the probe left out because they
	// may only be called as tasks (execution.taskSupport "required") and
	// it could not call them so: the server does not declare
	// tasks.requests.tools.call, or they were beyond maxTaskCalls.
	TaskOnlyTools []string
	// Initialized says the handshake (initialize+initialized, or
	// server/discover) completed.
	Initialized bool
	// Requests is every request the probe sent, in id order, including
	// those it could not write (their Error starts with "not sent").
	Requests []Request
	// ServerRequests are the methods of server-to-client requests the probe
	// answered, in the order they arrived.
	ServerRequests []string
	// Notifications is how many notifications the server sent.
	Notifications int
	// Coverage says what of the server's declared surface the session
	// exercised; nil when the handshake did not complete.
	Coverage *Coverage
}

// Request is one request the probe sent and what became of it.
type Request struct {
	// ID is the JSON text of the id.
	ID     string
	Method string
	// Tool is the tool of a tools/call.
	Tool string
	// Target is what another request is about: the prompt of a
	// prompts/get, the URI of a resources/read, subscribe or unsubscribe,
	// the task of a tasks/get, tasks/result or tasks/cancel.
	Target string
	// AsTask says a tools/call was augmented with a task (params.task).
	AsTask bool
	// Deliberate says the request was sent to be refused, and what it was
	// (DeliberateUnknownTool...): an error answer is what it expects.
	Deliberate string
	// Hostile says the request was one of the hostile workload's, and what
	// was hostile about it: any answer in time is what it expects.
	Hostile string
	// Growth says the request was a step of a growth series (Hostile says
	// which): the same request at growing input sizes.
	Growth bool
	// Answered says a result or an error came back in time; Error is then
	// the JSON-RPC error, if any.
	Answered bool
	// Error says why the request failed: a JSON-RPC error ("-32601: Method
	// not found"), or why no answer came (not sent, deadline, output ended).
	Error string
	// ToolError is the text of a tool call's result that says the tool
	// failed (isError: true), which is an answer, not a protocol error:
	// often the generated arguments did not suit the tool.
	ToolError string
	// Overdue says the request passed its deadline unanswered and was
	// reported to Config.Overdue (it may still have been answered later).
	Overdue bool
	// Took is the time from sending to the answer, or to giving up.
	Took time.Duration
}

// UnknownToolError is returned by Run when a Call names a tool the server does
// not list; it is the user's mistake, not the server's.
type UnknownToolError struct {
	Tool  string
	Known []string
}

func (e *UnknownToolError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("tool %q is not listed by the server, which lists no tools", e.Tool)
	}
	return fmt.Sprintf("tool %q is not listed by the server (it lists: %s)", e.Tool, strings.Join(e.Known, ", "))
}

// Run drives one session: it writes requests to w (the server's stdin) and
// reads the server's messages from r (its stdout). It returns when the
// workload is done (every request answered or given up after its deadline) or
// ctx ends, after closing w (which starts the server's shutdown), reading r a
// little longer for late answers, and closing r.
//
// Run closes both r and w before it returns, whatever happens, and leaves no
// goroutine behind. That relies on Close unblocking a Read or Write in
// progress, as it does for io.Pipe and os pipes: closing is how Run stops
// waiting on a server that neither reads nor writes.
//
// The error says why the session could not go on: the server never completed
// initialization, a Call names a tool the server does not list
// (*UnknownToolError), a Call's arguments are not an object, or ctx ended.
// Requests that were not answered are not errors: they are in the Outcome,
// which is returned even with an error (nil only for an invalid Config).
func Run(ctx context.Context, cfg Config, r io.ReadCloser, w io.WriteCloser) (*Outcome, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		_ = w.Close()
		_ = r.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	s := newSession(ctx, cfg, r, w)
	go s.readLoop()
	go s.writeLoop()

	out := &Outcome{}
	err = s.workload(out)
	s.finish()
	s.report(out)
	return out, err
}

func (cfg Config) normalize() (Config, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = defaultConcurrency
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = defaultDeadline
	}
	if cfg.MaxDeadline <= 0 {
		cfg.MaxDeadline = defaultMaxDeadline
	}
	cfg.MaxDeadline = max(cfg.MaxDeadline, cfg.Deadline)
	if cfg.ClientName == "" {
		cfg.ClientName = cmp.Or(cfg.Marker, defaultClientName)
	}
	if cfg.Era != "" && cfg.Era != EraStateful {
		return cfg, fmt.Errorf("probe: era %q is not %q or empty (negotiate)", cfg.Era, EraStateful)
	}
	if cfg.Calls != nil {
		calls := make([]Call, len(cfg.Calls))
		for i, c := range cfg.Calls {
			if c.Args == nil {
				c.Args = json.RawMessage("{}")
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(c.Args, &obj); err != nil || obj == nil {
				return cfg, &ArgsError{Tool: c.Tool}
			}
			calls[i] = c
		}
		cfg.Calls = calls
	}
	return cfg, nil
}

// ArgsError is returned by Run when a Call's arguments are not a JSON object;
// like UnknownToolError it is a usage error.
type ArgsError struct {
	Tool string
}

func (e *ArgsError) Error() string {
	return fmt.Sprintf("the arguments of the call to %q are not a JSON object", e.Tool)
}

// ErrNotInitialized is wrapped by the error Run returns when the handshake
// (server/discover, or initialize) did not complete, so nothing else could be
// asked of the server.
var ErrNotInitialized = errors.New("the server did not complete initialization")
