package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// exitTimeout bounds how long the server may take to exit when asked to.
const exitTimeout = 10 * time.Second

// server is a running example server with its stdio on pipes.
type server struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
}

// start builds the server into a temporary directory and starts it.
func start(t *testing.T) *server {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build with: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "everything")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Only reached with the process still running if the test failed.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &server{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout)}
}

// initialize sends an initialize request and waits for the response, which
// shows the server is up and serving.
func (s *server) initialize(t *testing.T) {
	t.Helper()
	const req = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}` + "\n"
	if _, err := io.WriteString(s.stdin, req); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		l, _ := s.stdout.ReadString('\n') // ends with the process at the latest
		line <- l
	}()
	select {
	case l := <-line:
		if l == "" {
			t.Fatal("server closed stdout without answering initialize")
		}
	case <-time.After(exitTimeout):
		t.Fatalf("no answer to initialize within %v", exitTimeout)
	}
}

// waitExit waits for cmd to exit and checks that it exited 0.
func waitExit(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server exited with %v, want status 0", err)
		}
	case <-time.After(exitTimeout):
		t.Fatalf("server still running %v after being asked to exit", exitTimeout)
	}
}

func TestExitsWhenStdinCloses(t *testing.T) {
	s := start(t)
	s.initialize(t)
	if err := s.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	waitExit(t, s.cmd)
}

func TestExitsOnSIGTERM(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	s := start(t) // stdin stays open: only the signal can stop it
	// Once it answers, main has installed its signal handler; before that
	// SIGTERM would kill it outright, which waitExit reports as a failure.
	s.initialize(t)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, s.cmd)
}
