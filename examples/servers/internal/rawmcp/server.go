package rawmcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// MaxLine is the longest line Serve reads; a longer one ends the session as
// EOF does (with a log line), rather than breaking a fixed-size scanner.
const MaxLine = 64 << 20

// DefaultHandlerWait is how long Serve waits for running handlers after stdin
// reaches EOF when Server.HandlerWait is zero.
const DefaultHandlerWait = 2 * time.Second

// Forever, as Server.HandlerWait, makes Serve wait for running handlers
// however long they take.
const Forever time.Duration = -1

// ErrClosed is the error of a server-to-client request that cannot be answered
// any more because stdin reached EOF, and of a write after Serve returned.
var ErrClosed = errors.New("rawmcp: connection closed (stdin reached EOF)")

// Method handles one request: its result, or the JSON-RPC error to answer.
type Method func(ctx context.Context, era Era, params json.RawMessage) (map[string]any, *Error)

// Notification is a notification from the client.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Server is an MCP server. Set its fields, then call Serve once; a Server must
// not be copied after Serve starts.
type Server struct {
	Name, Version string
	Tools         []Tool

	// Capabilities are declared besides tools (prompts, resources,
	// logging, tasks...), as initialize and server/discover give them.
	Capabilities map[string]any

	// Methods handle requests of their method before Serve does: a
	// handler that returns (nil, nil) leaves the request to Serve's own
	// handling (tools/call of a handler that only takes task-augmented
	// calls). A method neither handles is answered -32601.
	Methods map[string]Method

	// StatefulOnly drops the stateless era: server/discover is answered
	// "method not found", so clients fall back to initialize, and a request
	// declaring 2026-07-28 in its _meta is refused as an unsupported version.
	StatefulOnly bool

	// OnNotification receives, on the read loop, every client notification
	// Serve does not handle itself (it handles notifications/initialized,
	// see OnInitialized, and notifications/cancelled). nil ignores them, as
	// MCP requires. The read
	// loop reads nothing else until it returns.
	OnNotification func(Notification)

	// OnInitialized runs on the read loop for each notifications/initialized
	// from the client (Serve keeps no session state of its own). nil
	// ignores it.
	OnInitialized func(params json.RawMessage)

	// OnStrayResponse runs on the read loop for a response from the client
	// that no request of the server's is waiting for: one it never sent, one
	// it stopped waiting for, or one answered already (the same answer
	// twice). nil logs it and reads on, as JSON-RPC asks of a response the
	// receiver cannot match.
	OnStrayResponse func(id json.RawMessage, r Response)

	// OnRequest runs on the read loop for every client request before Serve
	// handles it (id is its JSON text); returning false drops the request
	// unanswered. nil handles every request.
	OnRequest func(id json.RawMessage, method string) bool

	// WriteLine writes one message, a whole line ending in '\n', to out. It is
	// called with the writer lock held, so lines never interleave. nil writes
	// line with one out.Write.
	WriteLine func(out io.Writer, line []byte) error

	// AtEOF runs on the read loop the moment stdin reaches EOF, before Serve
	// fails pending server-to-client requests and waits for handlers. nil does
	// nothing.
	AtEOF func()

	// KeepPendingAtEOF leaves server-to-client requests waiting after stdin
	// reaches EOF, although no answer can arrive any more. The default fails
	// them at once with ErrClosed, so the handlers waiting on them can finish.
	KeepPendingAtEOF bool

	// HandlerWait bounds how long Serve waits for running handlers after
	// stdin reaches EOF: zero means DefaultHandlerWait, Forever means no bound.
	// Handlers still running then have their context cancelled.
	HandlerWait time.Duration

	// ReadLines reads in and calls line, on the read loop, with each line read
	// (its '\n' may be left on), until in ends: it returns nil at EOF, or the
	// error that stopped it, which Serve logs before shutting down as at EOF.
	// nil reads with a bufio.Scanner that takes lines up to MaxLine long.
	ReadLines func(in io.Reader, line func([]byte)) error

	// OnBadLine runs on the read loop for a line that is not a JSON-RPC
	// message; err says why. nil answers it with a parse error (id null), as
	// JSON-RPC asks, and reads on.
	OnBadLine func(line []byte, err error)

	// ErrorLog receives the server's own log lines; nil means stderr.
	ErrorLog *log.Logger

	out      io.Writer
	handlers sync.WaitGroup
	ctx      context.Context
	stop     context.CancelFunc

	writeMu     sync.Mutex
	closed      bool // Serve returned, writes fail
	writeFailed bool // a write failed and was logged

	mu       sync.Mutex
	eof      bool
	nextID   int64
	inflight map[string]*inflight     // client requests being handled, by id JSON
	pending  map[string]chan Response // our requests to the client, by id JSON
}

type inflight struct {
	cancel    context.CancelFunc
	cancelled bool // by notifications/cancelled: the client wants no answer
}

// Response is the client's answer to a server-to-client request.
type Response struct {
	Result json.RawMessage
	Err    error
}

// message is any JSON-RPC message; which fields are set says which kind.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// ServeStdio serves on the process's stdin and stdout.
//
// A client that stops reading for good (closes its end of stdout) makes the
// writes fail with EPIPE, logged once, instead of killing the process with
// SIGPIPE: the server goes on reading stdin and exits 0 at EOF, as it would
// have.
//
// It also watches for SIGINT and SIGTERM, and dies of them as it would
// without watching (after a line on stderr). The watching is what matters: a
// Go program whose every goroutine waits on another is killed by the runtime
// ("fatal error: all goroutines are asleep - deadlock!"), unless something
// such as a signal watcher could still wake one. Real servers have one, so a
// stuck server stays stuck, a hang or a zombie, instead of crashing.
func (s *Server) ServeStdio() error {
	s.defaultLog()
	signal.Ignore(syscall.SIGPIPE)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-signals
		s.ErrorLog.Printf("%v: exiting", sig)
		signal.Reset(sig)
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Signal(sig)
		}
	}()
	return s.Serve(os.Stdin, os.Stdout)
}

// Serve reads messages from in and writes to out until in reaches EOF, then
// fails pending server-to-client requests, waits for running handlers (see
// HandlerWait) and returns. It returns an error only when it stopped waiting
// for handlers that were still running. After Serve returns no more writes
// reach out.
func (s *Server) Serve(in io.Reader, out io.Writer) error {
	s.out = out
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.inflight = map[string]*inflight{}
	s.pending = map[string]chan Response{}
	s.defaultLog()

	read := s.ReadLines
	if read == nil {
		read = scanLines
	}
	if err := read(in, s.handleLine); err != nil {
		s.ErrorLog.Printf("reading stdin: %v; shutting down as at EOF", err)
	}

	if s.AtEOF != nil {
		s.AtEOF()
	}
	s.mu.Lock()
	s.eof = true
	s.mu.Unlock()
	if !s.KeepPendingAtEOF {
		s.failPending(ErrClosed)
	}
	err := s.waitHandlers()
	s.stop()

	s.writeMu.Lock()
	s.closed = true
	s.writeMu.Unlock()
	return err
}

// scanLines is the default ReadLines: lines up to MaxLine long.
func scanLines(in io.Reader, line func([]byte)) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for sc.Scan() {
		line(sc.Bytes())
	}
	return sc.Err()
}

func (s *Server) defaultLog() {
	if s.ErrorLog == nil {
		s.ErrorLog = log.New(os.Stderr, s.Name+": ", log.LstdFlags)
	}
}

func (s *Server) waitHandlers() error {
	done := make(chan struct{})
	go func() {
		s.handlers.Wait()
		close(done)
	}()
	wait := s.HandlerWait
	if wait == 0 {
		wait = DefaultHandlerWait
	}
	if wait < 0 {
		<-done
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-done:
		return nil
	case <-timer.C:
		s.mu.Lock()
		n := len(s.inflight)
		s.mu.Unlock()
		return fmt.Errorf("%d requests still running %v after stdin closed; cancelling them", n, wait)
	}
}

func (s *Server) handleLine(line []byte) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		if s.OnBadLine != nil {
			s.OnBadLine(line, err)
			return
		}
		s.ErrorLog.Printf("stdin: not JSON-RPC: %v", err)
		_ = s.ReplyError(nil, CodeParseError, "Parse error")
		return
	}
	switch {
	case m.Method == "" && m.ID != nil:
		s.deliver(m)
	case m.Method == "":
		s.ErrorLog.Printf("stdin: message with neither method nor id: %s", line)
	case m.ID == nil:
		s.notification(Notification{Method: m.Method, Params: m.Params})
	case s.OnRequest != nil && !s.OnRequest(m.ID, m.Method):
	default:
		s.request(m.ID, m.Method, m.Params)
	}
}

func (s *Server) notification(n Notification) {
	switch n.Method {
	case "notifications/initialized":
		if s.OnInitialized != nil {
			s.OnInitialized(n.Params)
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(n.Params, &p) != nil || p.RequestID == nil {
			return
		}
		s.mu.Lock()
		if f := s.inflight[string(p.RequestID)]; f != nil {
			f.cancelled = true
			f.cancel()
		}
		s.mu.Unlock()
	default:
		if s.OnNotification != nil {
			s.OnNotification(n)
		}
	}
}

// request runs one client request in its own goroutine and answers it, unless
// the client cancelled it meanwhile.
func (s *Server) request(id json.RawMessage, method string, params json.RawMessage) {
	key := string(id)
	ctx, cancel := context.WithCancel(s.ctx)
	f := &inflight{cancel: cancel}
	s.mu.Lock()
	s.inflight[key] = f
	s.mu.Unlock()

	s.handlers.Add(1)
	go func() {
		s.answer(ctx, id, method, params, key, f)
		// Not deferred: while a panic in the handler unwinds (the crash
		// example's send on a closed channel), a deferred Done would let
		// Serve and main return, and the process exit 0 before the runtime
		// printed the panic.
		s.handlers.Done()
	}()
}

// answer runs the handler of request id and answers it, unless the client
// cancelled it meanwhile.
func (s *Server) answer(ctx context.Context, id json.RawMessage, method string, params json.RawMessage, key string, f *inflight) {
	result, rerr := s.dispatch(ctx, method, params)
	s.mu.Lock()
	if s.inflight[key] == f {
		delete(s.inflight, key)
	}
	cancelled := f.cancelled
	s.mu.Unlock()
	f.cancel()
	if cancelled {
		return
	}
	if rerr != nil {
		_ = s.ReplyError(id, rerr.Code, rerr.Message, rerr.Data)
		return
	}
	_ = s.send(message{JSONRPC: "2.0", ID: id, Result: mustJSON(result)})
}

// Request sends a request to the client and waits for its answer, for ctx to
// end, or for stdin to reach EOF (ErrClosed; see KeepPendingAtEOF). Only the
// stateful era has server-to-client requests: handlers call it through
// Call.Request, which checks the era.
func (s *Server) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	if s.eof && !s.KeepPendingAtEOF {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.nextID++
	id := json.RawMessage(strconv.FormatInt(s.nextID, 10))
	answer := make(chan Response, 1)
	s.pending[string(id)] = answer
	s.mu.Unlock()

	forget := func() {
		s.mu.Lock()
		delete(s.pending, string(id))
		s.mu.Unlock()
	}
	m := message{JSONRPC: "2.0", ID: id, Method: method}
	if params != nil {
		m.Params = mustJSON(params)
	}
	if err := s.send(m); err != nil {
		forget()
		return nil, err
	}
	select {
	case r := <-answer:
		return r.Result, r.Err
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

func (s *Server) deliver(m message) {
	s.mu.Lock()
	answer := s.pending[string(m.ID)]
	delete(s.pending, string(m.ID))
	s.mu.Unlock()
	r := Response{Result: m.Result}
	if m.Error != nil {
		r = Response{Err: m.Error}
	}
	if answer == nil {
		if s.OnStrayResponse != nil {
			s.OnStrayResponse(m.ID, r)
			return
		}
		s.ErrorLog.Printf("stdin: response to id %s, which we never asked or already forgot", m.ID)
		return
	}
	answer <- r
}

func (s *Server) failPending(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, answer := range s.pending {
		answer <- Response{Err: err}
		delete(s.pending, id)
	}
}

// Notify sends a notification to the client.
func (s *Server) Notify(method string, params any) error {
	return s.send(message{JSONRPC: "2.0", Method: method, Params: mustJSON(params)})
}

// ReplyError writes an error response for id; a nil id is written as null,
// which JSON-RPC reserves for errors about a message whose id is unknown.
func (s *Server) ReplyError(id json.RawMessage, code int, msg string, data ...any) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	e := &Error{Code: code, Message: msg}
	if len(data) > 0 {
		e.Data = data[0]
	}
	return s.send(message{JSONRPC: "2.0", ID: id, Error: e})
}

// send writes m as one line under the writer lock.
func (s *Server) send(m message) error {
	line, err := json.Marshal(m)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.WriteLine != nil {
		err = s.WriteLine(s.out, line)
	} else {
		_, err = s.out.Write(line)
	}
	if err != nil && !s.writeFailed {
		s.writeFailed = true
		s.ErrorLog.Printf("writing to the client: %v; answers are lost until stdin closes", err)
	}
	return err
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("rawmcp: encoding %T: %v", v, err))
	}
	return b
}
