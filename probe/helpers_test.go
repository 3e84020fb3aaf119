package probe

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/everything"
)

// testTimeout bounds every wait of the tests themselves.
const testTimeout = 20 * time.Second

// checkNoGoroutineLeak fails the test if goroutines started during it are
// still running once it ends. Register it first, so that it runs after the
// cleanups that stop the servers.
func checkNoGoroutineLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("%d goroutines leaked:\n%s", n-before, stacks(""))
		}
	})
}

// stacks returns the stacks of all goroutines that mention want (all of them
// when want is empty), leaving out the caller's own.
func stacks(want string) string {
	buf := make([]byte, 1<<20)
	all := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")[1:]
	var keep []string
	for _, g := range all {
		if strings.Contains(g, want) && !strings.Contains(g, "testing.tRunner") {
			keep = append(keep, g)
		}
	}
	return strings.Join(keep, "\n\n")
}

// run calls Run and checks that it leaves none of its goroutines behind,
// whatever state the server is in. The settle loop only covers the moment a
// goroutine takes to return after closing the channel Run waited on.
func run(t *testing.T, cfg Config, r io.ReadCloser, w io.WriteCloser) (*Outcome, time.Duration, error) {
	t.Helper()
	start := time.Now()
	out, err := Run(context.Background(), cfg, r, w)
	took := time.Since(start)
	t.Logf("Run took %v", took.Round(time.Millisecond))
	const mine = "mcpchaos/probe.(*session)"
	deadline := time.Now().Add(200 * time.Millisecond)
	for stacks(mine) != "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if left := stacks(mine); left != "" {
		t.Errorf("goroutines of Run still running after it returned:\n%s", left)
	}
	return out, took, err
}

// serveEverything runs the example mcp-go server in-process and returns the
// probe's ends of its stdout and stdin. ServeStdio returns when its stdin hits
// EOF, which Run causes by closing w; its stdout is closed then, as a process
// exiting would.
func serveEverything(t *testing.T) (r io.ReadCloser, w io.WriteCloser) {
	t.Helper()
	toProbe, serverOut := io.Pipe()
	serverIn, fromProbe := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		err := everything.ServeStdio(ctx, serverIn, serverOut)
		serverOut.Close()
		served <- err
	}()
	t.Cleanup(func() {
		cancel()
		serverIn.Close()
		select {
		case err := <-served:
			if err != nil && err != context.Canceled {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(testTimeout):
			t.Errorf("ServeStdio did not return")
		}
	})
	return toProbe, fromProbe
}

// fake is a scripted server on in-memory pipes: its script reads the lines
// the probe writes and writes raw lines back.
type fake struct {
	in  *bufio.Reader
	inR *io.PipeReader
	out *io.PipeWriter
	// release ends a script that waits for it (a server that never exits).
	release chan struct{}

	mu  sync.Mutex
	got []string // every line read from the probe
}

// startFake runs script as the server. When the script returns, the server's
// stdout is closed, as when a process exits.
func startFake(t *testing.T, script func(f *fake)) (r io.ReadCloser, w io.WriteCloser, f *fake) {
	t.Helper()
	toProbe, serverOut := io.Pipe()
	serverIn, fromProbe := io.Pipe()
	f = &fake{in: bufio.NewReader(serverIn), inR: serverIn, out: serverOut, release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		script(f)
		serverOut.Close()
	}()
	t.Cleanup(func() {
		close(f.release)
		serverIn.Close()
		serverOut.Close()
		select {
		case <-done:
		case <-time.After(testTimeout):
			t.Errorf("fake server did not return")
		}
	})
	return toProbe, fromProbe, f
}

// next returns the next line the probe wrote, without its newline.
func (f *fake) next() (string, bool) {
	line, err := f.in.ReadString('\n')
	if err != nil {
		return "", false
	}
	line = strings.TrimSuffix(line, "\n")
	f.mu.Lock()
	f.got = append(f.got, line)
	f.mu.Unlock()
	return line, true
}

// serve runs handle on each line the probe writes, parsed, until the
// probe's output ends or handle returns false.
func (f *fake) serve(t *testing.T, handle func(m msg, line string) bool) {
	for {
		line, ok := f.next()
		if !ok || !handle(parse(t, line), line) {
			return
		}
	}
}

// stateful answers what the stateful fakes answer alike: server/discover
// refused (so the probe falls back to the handshake), initialize, ping,
// and tools/list with tools (a JSON array). It says whether it answered m.
func (f *fake) stateful(m msg, tools string) bool {
	switch m.Method {
	case "server/discover":
		f.send(methodNotFound(m.ID))
	case "initialize":
		f.send(result(m.ID, initializeResult))
	case "tools/list":
		f.send(result(m.ID, `{"tools":`+tools+`}`))
	case "ping":
		f.send(result(m.ID, `{}`))
	default:
		return false
	}
	return true
}

// refuse answers a request no script handles as an SDK server does: a call
// of a tool other than those named, -32602; any other method, -32601.
// Notifications and the probe's answers are left alone.
func (f *fake) refuse(m msg, tools ...string) {
	switch {
	case m.Method == "" || m.ID == nil:
	case m.Method == "tools/call" && !slices.Contains(tools, m.Params.Name):
		f.send(invalidParams(m.ID, "unknown tool"))
	case m.Method != "tools/call":
		f.send(methodNotFound(m.ID))
	}
}

func (f *fake) send(line string) {
	_, _ = io.WriteString(f.out, line+"\n")
}

func (f *fake) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

// msg is what a script needs to know about a line from the probe.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Cursor    string          `json:"cursor"`
		Arguments json.RawMessage `json:"arguments"`
		Task      json.RawMessage `json:"task"`
	} `json:"params"`
}

func parse(t *testing.T, line string) msg {
	var m msg
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Errorf("the probe wrote a line that is not JSON: %q", line)
	}
	return m
}

func result(id json.RawMessage, result string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
}

func invalidParams(id json.RawMessage, why string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32602,"message":"` + why + `"}}`
}

func methodNotFound(id json.RawMessage) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32601,"message":"Method not found"}}`
}

// initializeResult is a stateful server's answer to initialize.
const initializeResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`

// overdueLog records Config.Overdue calls.
type overdueLog struct {
	mu    sync.Mutex
	calls []string
}

func (o *overdueLog) record(id, method string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, id+" "+method)
}

func (o *overdueLog) sorted() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Sorted(slices.Values(o.calls))
}
