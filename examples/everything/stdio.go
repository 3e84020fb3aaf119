package everything

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// serving guards ServeStdio: mcp-go keeps its stdio session in a package
// variable, so two stdio servers in one process would share notifications and
// pending requests, and each would see the other's traffic.
var serving sync.Mutex

// ErrAlreadyServing is returned by ServeStdio when another ServeStdio is
// running in the same process.
var ErrAlreadyServing = errors.New("everything: ServeStdio is already running in this process (mcp-go's stdio session is process-wide)")

// ServeStdio serves the server as newline-delimited JSON-RPC, reading from in
// and writing to out.
//
// Unlike New() on mcp-go's stdio transport, it writes every notification a
// tool sends before that tool's response, as a client expects: mcp-go queues
// notifications and writes them from another goroutine, usually after the
// response.
//
// It returns nil when in reaches EOF, after cancelling the calls still running
// (their error responses are still written to out), and ctx.Err() when ctx
// ends first. In the second case mcp-go leaves a goroutine blocked reading in
// until in is closed, so callers that stay alive should close it.
//
// Only one ServeStdio may run per process at a time; see ErrAlreadyServing.
func ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if !serving.TryLock() {
		return ErrAlreadyServing
	}
	defer serving.Unlock()

	w := &messageWriter{w: out}
	p := &pinger{w: w, pending: make(map[string]chan error)}
	s := server.NewStdioServer(newServer(w.notify, p.ping))
	s.SetErrorLogger(log.New(os.Stderr, "everything: ", log.LstdFlags))
	return s.Listen(ctx, &inputFilter{r: bufio.NewReader(in), take: p.take}, w)
}

// pingIDPrefix starts the id of every ping the server sends. mcp-go numbers
// its own server-to-client requests with integers, so a string id never
// collides with them.
const pingIDPrefix = "mcpchaos-everything-ping-"

// pinger sends server-to-client pings, which mcp-go has no API for, and
// matches the client's answers to them. Answers reach it through inputFilter,
// before mcp-go sees them: mcp-go would take them for requests.
type pinger struct {
	w *messageWriter

	mu      sync.Mutex
	last    int
	pending map[string]chan error
}

// ping sends a ping and waits for its answer or for ctx to end.
func (p *pinger) ping(ctx context.Context) error {
	// Keep mcp-go's rule: nothing is sent to a client that has not initialized.
	if session := server.ClientSessionFromContext(ctx); session == nil || !session.Initialized() {
		return server.ErrNotificationNotInitialized
	}
	p.mu.Lock()
	p.last++
	id := pingIDPrefix + strconv.Itoa(p.last)
	answer := make(chan error, 1)
	p.pending[id] = answer
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
	}()

	line, err := json.Marshal(map[string]string{"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "method": string(mcp.MethodPing)})
	if err != nil {
		return err
	}
	if _, err := p.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("writing the ping: %w", err)
	}
	select {
	case err := <-answer:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// take reports whether line is the answer to one of the server's pings, and
// if so hands it to the ping waiting for it. Answers to pings that gave up
// waiting are taken too, and dropped.
func (p *pinger) take(line []byte) bool {
	if !bytes.Contains(line, []byte(pingIDPrefix)) {
		return false // cheap test first: most lines are not ping answers
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	var id string
	if json.Unmarshal(line, &m) != nil || m.Method != "" || json.Unmarshal(m.ID, &id) != nil || !strings.HasPrefix(id, pingIDPrefix) {
		return false
	}
	var err error
	switch {
	case m.Error != nil:
		err = fmt.Errorf("the client answered ping with error %d: %s", m.Error.Code, m.Error.Message)
	case m.Result == nil:
		err = errors.New("the client answered ping with neither result nor error")
	}
	p.mu.Lock()
	answer, ok := p.pending[id]
	delete(p.pending, id) // a second answer to the same ping is dropped
	p.mu.Unlock()
	if ok {
		answer <- err // buffered, and sent to at most once
	}
	return true
}

// inputFilter passes the lines of r through, except those take keeps.
type inputFilter struct {
	r    *bufio.Reader
	take func(line []byte) bool
	buf  []byte
	err  error
}

func (f *inputFilter) Read(b []byte) (int, error) {
	for len(f.buf) == 0 && f.err == nil {
		line, err := f.r.ReadBytes('\n')
		if len(line) > 0 && !f.take(line) {
			f.buf = line
		}
		f.err = err
	}
	if len(f.buf) == 0 {
		return 0, f.err
	}
	n := copy(b, f.buf)
	f.buf = f.buf[n:]
	return n, nil
}

// messageWriter writes whole messages to w, one at a time. mcp-go writes each
// message with a single Write, but it writes server-to-client requests such as
// roots/list outside the lock it holds for responses, and the tools write
// notifications themselves, so without this lock lines could interleave.
type messageWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (m *messageWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.w.Write(p)
}

func (m *messageWriter) notify(n mcp.JSONRPCNotification) error {
	line, err := json.Marshal(n)
	if err != nil {
		return err
	}
	_, err = m.Write(append(line, '\n'))
	return err
}
