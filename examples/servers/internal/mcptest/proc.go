// Package mcptest runs an example server as a child process in its tests and
// talks to it over its stdin and stdout like a small scripted MCP client.
//
// The child is the test binary itself, re-executed with an environment
// variable that makes TestMain run the example's main instead of the tests,
// as os/exec's own tests do; nothing is built. Every wait has a deadline, and
// the child and the goroutines reading it are gone when the test ends.
package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// envServer tells a re-executed test binary to run as the server.
const envServer = "MCPCHAOS_EXAMPLE_SERVER"

// Wait bounds the waits that expect something to happen.
const Wait = 5 * time.Second

// RunServerIfAsked, called first in TestMain, runs main and exits when this
// process is a server started by Start. main sees the arguments given to
// Start as its command line.
func RunServerIfAsked(main func()) {
	if os.Getenv(envServer) != "1" {
		return
	}
	os.Args = append([]string{os.Args[0]}, strings.Fields(os.Getenv(envServer+"_ARGS"))...)
	main()
	os.Exit(0)
}

// Command is the command line and environment that run the test binary as
// the example server with args, for a test that starts it some other way
// than Start (under mcpchaos's relay, say).
func Command(args ...string) (command, env []string, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	env = append(os.Environ(), envServer+"=1", envServer+"_ARGS="+strings.Join(args, " "),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return []string{exe}, env, nil
}

// Msg is one line the server wrote on stdout.
type Msg struct {
	Raw    string
	JSON   bool // Raw is a JSON object; the fields below are from it
	RPC    string
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
}

// IsResponse says whether m answers a request (with a result or an error).
func (m Msg) IsResponse() bool { return m.JSON && m.Method == "" && m.ID != nil }

// IsRequest says whether m is a server-to-client request.
func (m Msg) IsRequest() bool { return m.JSON && m.Method != "" && m.ID != nil }

// Proc is a running example server.
type Proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File // our read end

	// AnswerServerRequests makes the waits answer the server's requests as
	// they see them: roots/list with one root, anything else "method not
	// found". It is on by default.
	AnswerServerRequests bool

	Stateless bool // requests carry the stateless era's _meta
	// MayBeGone lets a write fail on a closed pipe: a server that exits on
	// the line being written (longer than a pipe holds) closes its stdin
	// under the writer.
	MayBeGone bool

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever the fields below change
	msgs     []Msg
	eof      bool // stdout reached EOF
	paused   bool
	exitCode int // valid once exited is closed
	nextID   int
	sent     []string // ids of the requests sent
	answered int      // msgs[:answered] were looked at for requests to answer

	stderr     lockedBuffer
	exited     chan struct{}
	readerDone chan struct{}
}

// Start runs the test binary as the example server with args (e.g. "--fixed").
func Start(t *testing.T, args ...string) *Proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary: %v", err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Proc{
		t: t, stdin: inW, AnswerServerRequests: true,
		changed: make(chan struct{}), exited: make(chan struct{}), readerDone: make(chan struct{}),
	}
	p.cmd = exec.Command(exe)
	// Under -race the server is race-instrumented too, and the race runtime
	// sleeps a second in os.Exit (atexit_sleep_ms) while the other goroutines
	// run on: enough for an "exit at once" bug to answer everything anyway.
	p.cmd.Env = append(os.Environ(), envServer+"=1", envServer+"_ARGS="+strings.Join(args, " "),
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting the server: %v", err)
	}
	inR.Close()
	outW.Close()
	p.stdout = outR
	go p.read(outR)
	go func() {
		p.cmd.Wait()
		p.mu.Lock()
		p.exitCode = p.cmd.ProcessState.ExitCode()
		p.mu.Unlock()
		close(p.exited)
	}()
	t.Cleanup(p.stop)
	return p
}

// stop kills the server if it still runs and waits for it and its reader.
func (p *Proc) stop() {
	p.ResumeReading()
	p.stdin.Close()
	select {
	case <-p.exited:
	default:
		p.cmd.Process.Kill()
	}
	for _, c := range []chan struct{}{p.exited, p.readerDone} {
		select {
		case <-c:
		case <-time.After(Wait):
			p.t.Errorf("the server (pid %d) or its reader did not finish within %v of being killed", p.cmd.Process.Pid, Wait)
			return
		}
	}
	if p.t.Failed() {
		p.t.Logf("server stderr:\n%s", p.Stderr())
	}
}

// read collects the server's stdout, line by line, while reading is not paused.
func (p *Proc) read(out *os.File) {
	defer close(p.readerDone)
	defer out.Close()
	br := bufio.NewReaderSize(gate{p, out}, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			p.mu.Lock()
			p.msgs = append(p.msgs, parse(line))
			p.broadcast()
			p.mu.Unlock()
		}
		if err != nil {
			p.mu.Lock()
			p.eof = true
			p.broadcast()
			p.mu.Unlock()
			return
		}
	}
}

// gate reads from r only while p's reading is not paused, so that a paused
// test lets the server's stdout pipe fill.
type gate struct {
	p *Proc
	r io.Reader
}

func (g gate) Read(b []byte) (int, error) {
	g.p.mu.Lock()
	for g.p.paused {
		ch := g.p.changed
		g.p.mu.Unlock()
		<-ch
		g.p.mu.Lock()
	}
	g.p.mu.Unlock()
	return g.r.Read(b)
}

func parse(line string) Msg {
	m := Msg{Raw: line}
	var f struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &f); err != nil || !strings.HasPrefix(strings.TrimSpace(line), "{") {
		return m
	}
	m.JSON, m.RPC, m.ID, m.Method, m.Params, m.Result = true, f.JSONRPC, f.ID, f.Method, f.Params, f.Result
	if f.Error != nil {
		json.Unmarshal(f.Error, &m.Error)
	}
	return m
}

// broadcast wakes every waiter; p.mu is held.
func (p *Proc) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// PauseReading stops reading the server's stdout, as a stalled client does:
// once the pipe is full, the server's writes block.
func (p *Proc) PauseReading() {
	p.mu.Lock()
	p.paused = true
	p.broadcast()
	p.mu.Unlock()
}

// ResumeReading reads the server's stdout again.
func (p *Proc) ResumeReading() {
	p.mu.Lock()
	p.paused = false
	p.broadcast()
	p.mu.Unlock()
}

// Send writes one line (a newline is added) to the server's stdin.
func (p *Proc) Send(line string) {
	p.t.Helper()
	p.stdin.SetWriteDeadline(time.Now().Add(Wait))
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		if p.MayBeGone && errors.Is(err, syscall.EPIPE) {
			return
		}
		p.t.Fatalf("writing to the server's stdin: %v", err)
	}
}

// Notify sends a notification.
func (p *Proc) Notify(method string, params any) {
	p.t.Helper()
	n := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		n["params"] = params
	}
	p.Send(mustJSON(n))
}

// Request sends a request and returns its id as JSON text. In the stateless
// era the params get the _meta every request of that era carries.
func (p *Proc) Request(method string, params map[string]any) string {
	p.t.Helper()
	p.mu.Lock()
	p.nextID++
	id := fmt.Sprint(p.nextID)
	p.sent = append(p.sent, id)
	p.mu.Unlock()
	if params == nil {
		params = map[string]any{}
	}
	if p.Stateless {
		meta, _ := params["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
		meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "mcptest", "version": "1"}
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
		params["_meta"] = meta
	}
	p.Send(mustJSON(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params}))
	return id
}

// CallTool sends tools/call; a non-empty progress token asks for progress.
func (p *Proc) CallTool(name string, args map[string]any, progressToken string) string {
	p.t.Helper()
	params := map[string]any{"name": name, "arguments": args}
	if progressToken != "" {
		params["_meta"] = map[string]any{"progressToken": progressToken}
	}
	return p.Request("tools/call", params)
}

// WaitFor waits up to d for cond to hold over everything the server wrote so
// far, answering the server's requests meanwhile (see AnswerServerRequests).
func (p *Proc) WaitFor(d time.Duration, cond func(msgs []Msg, eof bool) bool) bool {
	p.t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		var toAnswer []Msg
		if p.AnswerServerRequests {
			for _, m := range p.msgs[p.answered:] {
				if m.IsRequest() {
					toAnswer = append(toAnswer, m)
				}
			}
			p.answered = len(p.msgs)
		}
		ok := cond(p.msgs, p.eof)
		ch := p.changed
		p.mu.Unlock()
		for _, m := range toAnswer {
			p.answer(m)
		}
		if ok {
			return true
		}
		if len(toAnswer) > 0 {
			continue
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// answer is what this client replies to a server-to-client request.
func (p *Proc) answer(req Msg) {
	reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if req.Method == "roots/list" {
		reply["result"] = map[string]any{"roots": []any{map[string]any{"uri": "file:///tmp/mcptest", "name": "mcptest"}}}
	} else {
		reply["error"] = map[string]any{"code": -32601, "message": "Method not found"}
	}
	// The server may be gone or not reading any more; that is for the test to judge.
	p.stdin.SetWriteDeadline(time.Now().Add(Wait))
	io.WriteString(p.stdin, mustJSON(reply)+"\n")
}

// Responses returns the responses to id received so far.
func (p *Proc) Responses(id string) []Msg {
	p.mu.Lock()
	defer p.mu.Unlock()
	return responses(p.msgs, id)
}

func responses(msgs []Msg, id string) []Msg {
	var out []Msg
	for _, m := range msgs {
		if m.IsResponse() && string(m.ID) == id {
			out = append(out, m)
		}
	}
	return out
}

// Response waits up to d for the response to id; ok is false if none came.
func (p *Proc) Response(id string, d time.Duration) (m Msg, ok bool) {
	p.t.Helper()
	ok = p.WaitFor(d, func(msgs []Msg, _ bool) bool {
		if r := responses(msgs, id); len(r) > 0 {
			m = r[0]
			return true
		}
		return false
	})
	return m, ok
}

// Result waits for the response to id and fails the test unless it is a
// result, which it returns decoded.
func (p *Proc) Result(id string) map[string]any {
	p.t.Helper()
	m, ok := p.Response(id, Wait)
	if !ok {
		p.t.Fatalf("no response to request %s within %v", id, Wait)
	}
	if m.Error != nil || m.Result == nil {
		p.t.Fatalf("request %s failed: %s", id, m.Raw)
	}
	var r map[string]any
	if err := json.Unmarshal(m.Result, &r); err != nil {
		p.t.Fatalf("request %s: result is not an object: %s", id, m.Raw)
	}
	return r
}

// Messages returns everything the server wrote so far.
func (p *Proc) Messages() []Msg {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Msg(nil), p.msgs...)
}

// CloseOutput closes our read end of the server's stdout, as mcpchaos's
// half-close fault does: the server's writes fail with EPIPE from then on.
func (p *Proc) CloseOutput() { p.stdout.Close() }

// Signal sends sig to the server.
func (p *Proc) Signal(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signalling the server: %v", err)
	}
}

// CloseStdin closes the server's stdin: EOF, the MCP stdio way to say "exit".
func (p *Proc) CloseStdin() { p.stdin.Close() }

// Exit waits up to d for the server to exit and its stdout to reach EOF, and
// returns its exit code (-1 if a signal ended it); ok is false if it was still
// running.
func (p *Proc) Exit(d time.Duration) (code int, ok bool) {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(d):
		return 0, false
	}
	if !p.WaitFor(Wait, func(_ []Msg, eof bool) bool { return eof }) {
		p.t.Fatalf("the server exited but its stdout stayed open for %v", Wait)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitCode, true
}

// Running says whether the server process is still running.
func (p *Proc) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// ExitSignal is the signal that ended the server, or "" if none did (or it
// still runs).
func (p *Proc) ExitSignal() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}

// WaitStderr waits up to d for the server's stderr to contain s.
func (p *Proc) WaitStderr(s string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !strings.Contains(p.Stderr(), s) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// Stderr returns what the server wrote on stderr so far; once Exit returned
// ok, all of it.
func (p *Proc) Stderr() string { return p.stderr.String() }

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
