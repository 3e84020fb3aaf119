package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpchaos/mcpchaos/wire"

	"github.com/mcpchaos/mcpchaos/internal/machine"
)

const (
	// maxLine is the longest server frame the probe reads as a message, the
	// same cap the relay has by default; a longer one is skipped.
	maxLine = 64 << 20
	// queueSize bounds the lines waiting for the writer.
	queueSize = 64
)

// errEnded is why the workload stops issuing requests: the server can no
// longer receive them or answer them.
var errEnded = errors.New("the session ended")

// session is the plumbing of one Run: a reader goroutine that dispatches the
// server's frames, a writer goroutine that owns w, and a watcher goroutine per
// request that enforces its deadline. The workload runs on Run's goroutine.
type session struct {
	cfg   Config
	grace time.Duration
	ctx   context.Context
	r     io.ReadCloser
	w     io.WriteCloser
	// era is set by the handshake; only the workload goroutine uses it.
	era string

	// sendMu orders id allocation with queueing, so ids reach the wire in
	// order; it is never held by the writer, which keeps the queue moving.
	sendMu sync.Mutex
	queue  chan outgoing
	// batch, while set, is closed once callTools has queued its first
	// Concurrency calls: the writer waits for it (batchWait at most), so
	// they go in one write however the scheduler runs this process.
	batch atomic.Pointer[chan struct{}]
	// oneByOne, once set, says every request from now on is sent alone and
	// waited for (the hostile workload and its growth series): the writer
	// writes each at once, without gatherWindow's wait for company, which
	// cost each of them 5 ms.
	oneByOne atomic.Bool
	// afterWindow, when a test sets it, runs between gather's window and
	// its look at batch: the test queues lines and closes the batch there.
	afterWindow func()
	closed      bool // guarded by sendMu: queue is closed
	// stopping wakes senders blocked on a full queue when the workload ends.
	stopping chan struct{}

	// broken is closed when a write to w failed; writeErr says how.
	broken     chan struct{}
	writeErr   error
	writerDone chan struct{}
	closeW     func()

	// outputEnded is closed when reading r stopped (EOF, error, closed).
	outputEnded chan struct{}
	readerDone  chan struct{}
	closeR      func()

	mu             sync.Mutex
	nextID         int64
	requests       []Request
	pending        map[string]*pending
	byToken        map[string]*pending // by the JSON text of the progress token
	serverRequests []string
	notifications  int
	// whyNot and samples are what the coverage says beyond the requests:
	// why a callable method was not sent, and where the workload bounded
	// itself.
	whyNot  map[string]string
	samples []string
	// unanswered is the first request given up on for want of an answer
	// ("tools/call (id 4)"): the workload beyond the tool calls stops
	// there, since each more request to a server that does not answer
	// costs a deadline and shows nothing new.
	unanswered string

	overdueMu sync.Mutex
	watchers  sync.WaitGroup
}

// outgoing is a line for the writer; p is the request it carries, if any.
type outgoing struct {
	line []byte
	p    *pending
}

// pending is a request in flight. Fields other than the immutable ones are
// guarded by session.mu; result is safe to read once done is closed.
type pending struct {
	idx    int // in session.requests
	id     string
	method string
	token  string // JSON text of its progress token, if it has one
	sent   time.Time
	done   chan struct{}
	// progressed wakes the watcher when a progress notification for the
	// request arrives (buffered, never blocks the reader).
	progressed chan struct{}

	written  bool
	settled  bool
	answered bool
	result   json.RawMessage
	errText  string
}

func newSession(ctx context.Context, cfg Config, r io.ReadCloser, w io.WriteCloser) *session {
	return &session{
		cfg:         cfg,
		grace:       min(cfg.Deadline, maxGrace),
		ctx:         ctx,
		r:           r,
		w:           w,
		queue:       make(chan outgoing, queueSize),
		stopping:    make(chan struct{}),
		broken:      make(chan struct{}),
		writerDone:  make(chan struct{}),
		closeW:      sync.OnceFunc(func() { _ = w.Close() }),
		outputEnded: make(chan struct{}),
		readerDone:  make(chan struct{}),
		closeR:      sync.OnceFunc(func() { _ = r.Close() }),
		pending:     make(map[string]*pending),
		byToken:     make(map[string]*pending),
	}
}

// ended reports whether requests sent now could no longer be answered.
func (s *session) ended() bool {
	select {
	case <-s.broken:
		return true
	case <-s.outputEnded:
		return true
	case <-s.ctx.Done():
		return true
	default:
		return false
	}
}

// request sends a request and starts its deadline. The returned pending is
// always settled in the end (answered, failed or given up), so waiting on its
// done channel is bounded. It fails only when the session has ended, and then
// sends nothing.
// target is what the request is about, for the outcome: the tool of a
// tools/call, the prompt of a prompts/get, a resource's URI, a task's id.
func (s *session) request(method string, params any, target string) (*pending, error) {
	return s.requestWithToken(method, params, target, "")
}

// requestWithToken is request for a request whose params carry the
// progress token token (its JSON text): progress for it keeps it alive.
func (s *session) requestWithToken(method string, params any, target, token string) (*pending, error) {
	return s.send(method, "", params, target, token)
}

// requestRaw is request with the id's JSON text given ("": the next id) and
// the params as JSON text (nil: none), for requests no encoder would write.
func (s *session) requestRaw(method, id string, params json.RawMessage, target string) (*pending, error) {
	var p any
	if params != nil {
		p = params
	}
	return s.send(method, id, p, target, "")
}

func (s *session) send(method, idText string, params any, target, token string) (*pending, error) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.closed || s.ended() {
		return nil, errEnded
	}
	s.mu.Lock()
	if idText == "" {
		s.nextID++
		idText = strconv.FormatInt(s.nextID, 10)
	}
	p := &pending{
		idx:    len(s.requests),
		id:     idText,
		method: method,
		token:  token,
		sent:   time.Now(),
		done:   make(chan struct{}),

		progressed: make(chan struct{}, 1),
	}
	req := Request{ID: p.id, Method: method, Target: target}
	if method == "tools/call" {
		req = Request{ID: p.id, Method: method, Tool: target}
	}
	s.requests = append(s.requests, req)
	s.pending[p.id] = p
	if token != "" {
		s.byToken[token] = p
	}
	s.mu.Unlock()

	line := encode(frame{JSONRPC: "2.0", ID: json.RawMessage(p.id), Method: method, Params: params})
	s.watchers.Add(1)
	go s.watch(p)
	if err := s.enqueueLocked(outgoing{line: line, p: p}); err != nil {
		s.settle(p, false, nil, "not sent: "+err.Error())
	}
	return p, nil
}

// notify sends a notification.
func (s *session) notify(method string, params any) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if s.closed || s.ended() {
		return errEnded
	}
	return s.enqueueLocked(outgoing{line: encode(frame{JSONRPC: "2.0", Method: method, Params: params})})
}

// enqueueLocked hands a line to the writer; sendMu is held. It blocks only
// while the writer is stuck and the session goes on.
func (s *session) enqueueLocked(o outgoing) error {
	select {
	case s.queue <- o:
		return nil
	case <-s.broken:
		return s.writeErr
	case <-s.stopping:
		return errEnded
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// watch enforces p's deadline: report it overdue once, give it a grace
// period, then give up on it. Each progress notification for p restarts the
// deadline, until MaxDeadline after p was sent. Both waits are counted at
// the peer's share of a core (Config.Share), with wall-clock caps: however
// busy the machine, p is not waited for past MaxDeadline and one grace.
func (s *session) watch(p *pending) {
	defer s.watchers.Done()
	t := machine.NewTimer(s.cfg.Deadline, s.cfg.Share)
	defer t.Stop()
	limit := time.NewTimer(s.cfg.MaxDeadline)
	defer limit.Stop()
	settled, progressed := s.await(p, t, limit.C, p.progressed)
	if settled {
		return
	}
	// How long p was given before it was overdue: the deadline, or longer
	// when progress moved it or the machine was busy.
	waited := s.cfg.Deadline
	if progressed || t.Stretch() > 0 {
		waited = time.Since(p.sent).Round(100 * time.Millisecond)
	}
	if s.markOverdue(p) && s.cfg.Overdue != nil {
		s.overdueMu.Lock()
		s.cfg.Overdue(p.id, p.method)
		s.overdueMu.Unlock()
	}
	t.Reset(s.grace)
	graceCap := time.NewTimer(max(s.grace, time.Until(p.sent.Add(s.cfg.MaxDeadline+s.grace))))
	defer graceCap.Stop()
	if settled, _ := s.await(p, t, graceCap.C, nil); !settled {
		s.settle(p, false, nil, s.giveUpReason(p, waited+t.Stretch()))
	}
}

// await waits for p until t expires or limit fires; each signal on
// progress (nil: none) restarts t. settled says p was answered, or given
// up with the session's context; progressed says progress came.
func (s *session) await(p *pending, t *machine.Timer, limit <-chan time.Time, progress <-chan struct{}) (settled, progressed bool) {
	for {
		select {
		case <-p.done:
			return true, progressed
		case <-s.ctx.Done():
			s.settle(p, false, nil, "cancelled: "+s.ctx.Err().Error())
			return true, progressed
		case <-progress:
			progressed = true
			t.Reset(s.cfg.Deadline)
		case <-t.C():
			if t.Expired() {
				return false, progressed
			}
		case <-limit:
			return false, progressed
		}
	}
}

// giveUpReason tells a request the server never answered from one it never
// got: the writer was still blocked on a server that does not read.
func (s *session) giveUpReason(p *pending, waited time.Duration) string {
	s.mu.Lock()
	written := p.written
	s.mu.Unlock()
	if !written {
		return fmt.Sprintf("not sent: still waiting to be written after %v", waited+s.grace)
	}
	return fmt.Sprintf("no answer within %v", waited+s.grace)
}

// markOverdue records that p passed its deadline. Only a request that was
// written counts: one the writer never got out was not the server's to answer.
func (s *session) markOverdue(p *pending) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.settled || !p.written {
		return false
	}
	s.requests[p.idx].Overdue = true
	return true
}

// settle closes p with its outcome; only the first call counts. A settled
// request leaves the pending map, so a late answer is ignored like any
// response with an id the probe is not waiting on.
func (s *session) settle(p *pending, answered bool, result json.RawMessage, errText string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.settled {
		return
	}
	p.settled, p.answered, p.result, p.errText = true, answered, result, errText
	// server/discover is the exception: a server of an earlier revision
	// may ignore it.
	if !answered && s.unanswered == "" && p.written && strings.HasPrefix(errText, "no answer") && p.method != "server/discover" {
		s.unanswered = fmt.Sprintf("%s (id %s)", p.method, p.id)
	}
	req := &s.requests[p.idx]
	req.Answered, req.Error, req.Took = answered, errText, time.Since(p.sent)
	delete(s.pending, p.id)
	if p.token != "" && s.byToken[p.token] == p {
		delete(s.byToken, p.token)
	}
	close(p.done)
}

// settleAll gives up on every request in flight.
func (s *session) settleAll(errText string) {
	s.mu.Lock()
	all := make([]*pending, 0, len(s.pending))
	for _, p := range s.pending {
		all = append(all, p)
	}
	s.mu.Unlock()
	for _, p := range all {
		s.settle(p, false, nil, errText)
	}
}

// writeLoop owns w: it writes whole lines, one Write each, so no lock is
// needed for them, and no lock is held while a Write blocks on a server that
// does not read (finish can then close w under it). It closes w once the
// queue is closed and drained.
func (s *session) writeLoop() {
	defer close(s.writerDone)
	defer s.closeW()
	for o := range s.queue {
		batch := s.gather(o)
		if s.writeErr == nil {
			var buf []byte
			for _, b := range batch {
				buf = append(buf, b.line...)
			}
			_, err := s.w.Write(buf)
			if err == nil {
				s.mu.Lock()
				for _, b := range batch {
					if b.p != nil {
						b.p.written = true
					}
				}
				s.mu.Unlock()
				continue
			}
			// Only this goroutine writes writeErr, before closing broken;
			// others read it after broken is closed.
			s.writeErr = err
			close(s.broken)
		}
		for _, b := range batch {
			if b.p != nil {
				s.settle(b.p, false, nil, "not sent: "+s.writeErr.Error())
			}
		}
	}
}

// gatherWindow is how long the writer waits for the next queued line before
// writing what it has. Lines queued together (the first Concurrency tool
// calls) then reach the transport in one write, so they are in flight
// together however the scheduler runs the server: the faults that wait for
// several requests in flight (eof-inflight) depend on it.
const gatherWindow = 5 * time.Millisecond

// gather collects the lines queued right after first, up to 64 KiB.
func (s *session) gather(first outgoing) []outgoing {
	if s.oneByOne.Load() {
		return s.collect([]outgoing{first}, nil)
	}
	t := time.NewTimer(gatherWindow)
	defer t.Stop()
	batch := s.collect([]outgoing{first}, t.C)
	if s.afterWindow != nil {
		s.afterWindow()
	}
	if b := s.batch.Load(); b != nil {
		// callTools is still queueing its first calls: under load, the
		// gap between two of them can outlast gatherWindow, and the calls
		// would reach the server one by one.
		w := time.NewTimer(batchWait)
		defer w.Stop()
		select {
		case <-*b:
		case <-w.C:
		}
	}
	// What is queued by now goes in this write. callTools may have queued
	// the rest of its first calls after the window and closed its batch
	// before the look above: taken only when the batch was still open, they
	// went in a write of their own, after the server could answer the
	// first, and eof-inflight, waiting for three calls in flight, missed
	// its moment (TestGitHubActionSteps, under CI's load).
	return s.collect(batch, nil)
}

// batchWait bounds how long the writer waits for callTools to finish
// queueing its first calls.
const batchWait = time.Second

// collect adds to batch the lines queued, up to 64 KiB in all, until until
// fires (nil: until the queue is empty).
func (s *session) collect(batch []outgoing, until <-chan time.Time) []outgoing {
	size := 0
	for _, b := range batch {
		size += len(b.line)
	}
	for size < 64<<10 {
		if until == nil {
			select {
			case o, ok := <-s.queue:
				if !ok {
					return batch
				}
				batch, size = append(batch, o), size+len(o.line)
				continue
			default:
				return batch
			}
		}
		select {
		case o, ok := <-s.queue:
			if !ok {
				return batch
			}
			batch, size = append(batch, o), size+len(o.line)
		case <-until:
			return batch
		}
	}
	return batch
}

// readLoop reads the server's frames until r ends, then gives up on every
// request still in flight, since no answer can come any more.
func (s *session) readLoop() {
	defer close(s.readerDone)
	br := bufio.NewReaderSize(s.r, 64<<10)
	for {
		line, _, err := readLine(br, maxLine)
		if line != nil {
			s.handle(line)
		}
		if err != nil {
			break
		}
	}
	close(s.outputEnded)
	if err := s.ctx.Err(); err != nil {
		// The output ended because Run closed it once ctx ended: the
		// watchers would say so too, if they got there first.
		s.settleAll("cancelled: " + err.Error())
		return
	}
	s.settleAll("no answer: the server's output ended")
}

// readLine returns the next frame without its line end, or nil at the end of
// input. A frame longer than limit is skipped (skipped, nil line): the
// transport reports it, and buffering it would let a server make the probe
// allocate without bound.
func readLine(br *bufio.Reader, limit int) (line []byte, skipped bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipped {
			if len(line)+len(chunk) > limit+1 {
				skipped, line = true, nil
			} else {
				// ReadSlice's chunk is only valid until the next read.
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if skipped || line == nil {
			return nil, skipped, err
		}
		return bytes.TrimRight(line, "\r\n"), false, err
	}
}

func (s *session) handle(line []byte) {
	m := wire.Classify(line)
	switch m.Kind {
	case wire.Request:
		s.answerServer(m)
	case wire.Notification:
		s.mu.Lock()
		s.notifications++
		var p *pending
		if m.Method == "notifications/progress" && m.ProgressToken != "" {
			p = s.byToken[m.ProgressToken]
		}
		s.mu.Unlock()
		if p != nil {
			select {
			case p.progressed <- struct{}{}:
			default: // the watcher has a wake-up pending already
			}
		}
	case wire.Response, wire.Error:
		s.dispatch(m)
	}
	// Invalid frames are the transport's to record and the judge's to blame.
}

// dispatch settles the request m answers, if the probe is waiting on it.
func (s *session) dispatch(m wire.Message) {
	s.mu.Lock()
	p := s.pending[m.ID]
	s.mu.Unlock()
	if p == nil {
		return
	}
	var body struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Raw, &body); err != nil {
		s.settle(p, true, nil, "unreadable answer: "+err.Error())
		return
	}
	if m.Kind == wire.Error {
		if body.Error == nil {
			s.settle(p, true, nil, "error answer without an error object")
			return
		}
		s.settle(p, true, nil, fmt.Sprintf("%d: %s", body.Error.Code, body.Error.Message))
		return
	}
	s.settle(p, true, body.Result, "")
	if p.method == "tools/call" {
		if text, failed := toolError(body.Result); failed {
			s.mu.Lock()
			s.requests[p.idx].ToolError = text
			s.mu.Unlock()
		}
	}
}

// toolError reads a tools/call result: whether it says the tool failed
// (isError), and its first text, cut short.
func toolError(result json.RawMessage) (string, bool) {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil || !r.IsError {
		return "", false
	}
	text := "isError"
	if len(r.Content) > 0 && r.Content[0].Text != "" {
		text = r.Content[0].Text
		if len(text) > 120 {
			// Cut on a rune boundary: half a character is not UTF-8,
			// and the note goes into a JSON report.
			cut := 117
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + "..."
		}
	}
	return text, true
}

// Fixed results for server-to-client requests, in the 2025-11-25 shapes. They
// are the answers of a client that accepts everything and knows nothing, so
// the server's handler can always finish.
var serverRequestResults = map[string]json.RawMessage{
	"roots/list":             json.RawMessage(`{"roots":[{"uri":"file:///tmp/mcpchaos","name":"mcpchaos"}]}`),
	"sampling/createMessage": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"mcpchaos"},"model":"mcpchaos","stopReason":"endTurn"}`),
	"elicitation/create":     json.RawMessage(`{"action":"decline"}`),
	"ping":                   json.RawMessage(`{}`),
}

// answerServer replies to a server-to-client request.
func (s *session) answerServer(m wire.Message) {
	s.mu.Lock()
	s.serverRequests = append(s.serverRequests, m.Method)
	s.mu.Unlock()
	reply := frame{JSONRPC: "2.0", ID: json.RawMessage(m.ID)}
	if result, ok := serverRequestResults[m.Method]; ok {
		reply.Result = result
	} else {
		reply.Error = &rpcError{Code: -32601, Message: "Method not found: " + m.Method}
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	if !s.closed {
		_ = s.enqueueLocked(outgoing{line: encode(reply)})
	}
}

// frame is any JSON-RPC message the probe writes, members in the usual order.
type frame struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// encode marshals a frame into one line. The probe builds every frame from
// values it controls (arguments were checked to be objects), so failing here
// is a bug in the probe.
func encode(f frame) []byte {
	b, err := json.Marshal(f)
	if err != nil {
		panic("probe: encoding a frame: " + err.Error())
	}
	return append(b, '\n')
}

// finish ends the session: the writer drains its queue and closes w, the
// server's output is read until it ends or drainWait passes, then r is closed.
// Every wait is bounded, also when ctx has ended.
func (s *session) finish() {
	close(s.stopping)
	s.sendMu.Lock()
	s.closed = true
	close(s.queue)
	s.sendMu.Unlock()

	if !s.wait(s.writerDone, s.grace, true) {
		// The server is not reading its stdin; closing it unblocks the write.
		s.closeW()
		s.wait(s.writerDone, closeWait, false)
	}
	s.wait(s.outputEnded, drainWait, true)
	s.closeR()
	s.wait(s.readerDone, closeWait, false)
	s.watchers.Wait()
}

// wait waits at most d for ch to close. With interruptible, it stops waiting
// as soon as ctx ends: the caller then closes what it was waiting on instead.
func (s *session) wait(ch <-chan struct{}, d time.Duration, interruptible bool) bool {
	var cancelled <-chan struct{}
	if interruptible {
		cancelled = s.ctx.Done()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-cancelled:
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// report copies what the session recorded into out.
func (s *session) report(out *Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out.Requests = append([]Request(nil), s.requests...)
	out.ServerRequests = append([]string(nil), s.serverRequests...)
	out.Notifications = s.notifications
}
