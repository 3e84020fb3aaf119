package everything

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"os"
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
	s := server.NewStdioServer(newServer(w.notify))
	s.SetErrorLogger(log.New(os.Stderr, "everything: ", log.LstdFlags))
	return s.Listen(ctx, in, w)
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
