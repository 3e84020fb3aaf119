//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// startWrap runs mcpchaos wrap (the test binary) around the cat server with
// a transcript, and waits until a ping has been relayed both ways.
func startWrap(t *testing.T, transcript string, server []string, faults ...string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	args := []string{"wrap", "-q", "--transcript", transcript}
	for _, f := range faults {
		args = append(args, "--fault", f)
	}
	cmd := exec.Command(os.Args[0], append(append(args, "--"), server...)...)
	cmd.Env = append(os.Environ(), "MCPCHAOS_TEST_MAIN=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin
}

// waitExit waits for cmd to exit, failing after timeout.
func waitExit(t *testing.T, cmd *exec.Cmd, timeout time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		cmd.Process.Kill()
		t.Fatalf("mcpchaos did not exit within %s", timeout)
	}
	return nil
}

// linger: SIGTERM to mcpchaos wrap during a linger is ignored (and
// recorded) until the linger ends; then wrap shuts its server down and exits.
func TestWrapLingerIgnoresSIGTERM(t *testing.T) {
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	cmd, _ := startWrap(t, transcript, catServer(t), "linger:for=1s")
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := waitExit(t, cmd, 15*time.Second); err != nil {
		t.Fatalf("mcpchaos exited with %v after the linger, want 0", err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("mcpchaos exited %s after SIGTERM, inside the 1s linger", took)
	}
	var got []string
	for _, e := range readTranscript(t, transcript) {
		if e.Type == wire.EventFault || e.Type == wire.EventSessionEnd {
			got = append(got, e.Type+": "+e.Detail)
		}
	}
	want := []string{
		"fault: ignore the client's EOF and SIGTERM/SIGINT for 1s once they come",
		"fault: ignored (mcpchaos got SIGTERM): the linger lasts 1s more",
		"fault: the linger ends: shutting down as asked (mcpchaos got SIGTERM)",
	}
	if len(got) != 4 || strings.Join(got[:3], "\n") != strings.Join(want, "\n") || !strings.HasPrefix(got[3], "session-end: ") {
		t.Errorf("transcript says %q; want %q and the session's end", got, want)
	}
}

// A client that escalates to SIGKILL ends mcpchaos wrap whatever the faults,
// and wrap's server dies with it (its parent-death signal): nothing lingers.
func TestWrapSIGKILLTakesItsServerAlong(t *testing.T) {
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	// The server echoes until its stdin ends and then sleeps on, deaf to
	// EOF: only its parent-death signal can end it when wrap dies. (exec
	// keeps its pid, and the signal survives exec.)
	cmd, _ := startWrap(t, transcript, []string{"sh", "-c", "cat; exec sleep 3600"}, "linger:for=1h")
	var server int
	for deadline := time.Now().Add(5 * time.Second); server == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(transcript) // flushed every 100ms
		for _, line := range strings.Split(string(b), "\n") {
			var e wire.Event
			if json.Unmarshal([]byte(line), &e) == nil && e.Type == wire.EventProcessStarted {
				server = e.PID
			}
		}
	}
	if server == 0 {
		t.Fatal("no process-started event with the server's pid in the transcript")
	}
	cmd.Process.Signal(syscall.SIGTERM) // ignored: the linger
	time.Sleep(100 * time.Millisecond)
	if !alive(server) {
		t.Fatal("the server died of a SIGTERM the linger should have ignored")
	}
	cmd.Process.Kill()
	waitExit(t, cmd, 5*time.Second)
	for deadline := time.Now().Add(5 * time.Second); alive(server); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(server, syscall.SIGKILL)
			t.Fatalf("the server (pid %d) outlived mcpchaos wrap's SIGKILL by 5s", server)
		}
	}
}

// alive reports whether pid runs (a zombie awaiting its reaper does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc: a zombie counts as alive
	}
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}
