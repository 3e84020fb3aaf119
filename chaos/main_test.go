//go:build unix

package chaos

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the child processes the relay is tested
// against, as os/exec's own tests do: TestMain dispatches on helperEnv.
const helperEnv = "MCPCHAOS_CHAOS_HELPER"

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(runHelper(name, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helperCommand is the argv of a helper child.
func helperCommand(t testing.TB, name string, args ...string) []string {
	t.Helper()
	t.Setenv(helperEnv, name)
	// A race-enabled binary sleeps a second at exit by default; the
	// helpers' exits are what these tests time.
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	return append([]string{os.Args[0]}, args...)
}

func runHelper(name string, args []string) int {
	switch name {
	case "cat":
		// Copies stdin to stdout unchanged, like cat(1), but in the test binary.
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "cat:", err)
			return 1
		}
		return 0
	case "stubborn":
		// Ignores its stdin closing and SIGTERM: only SIGKILL ends it.
		signal.Ignore(syscall.SIGTERM)
		fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"up"}}`)
		io.Copy(io.Discard, os.Stdin)
		time.Sleep(time.Hour)
		return 0
	case "term-exits":
		// Ignores its stdin closing but exits on SIGTERM.
		io.Copy(io.Discard, os.Stdin)
		time.Sleep(time.Hour)
		return 0
	case "exit":
		// Writes its arguments as lines, and a line to stderr, then exits
		// with the status in $EXIT without reading stdin.
		for _, a := range args {
			fmt.Println(a)
		}
		fmt.Fprintln(os.Stderr, "exiting now")
		code, _ := strconv.Atoi(os.Getenv("EXIT"))
		return code
	case "grandchild":
		// Starts a grandchild that sleeps for an hour in the same process
		// group, prints its pid, then exits.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=sleep")
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":%d}}\n", cmd.Process.Pid)
		return 0
	case "sleep":
		time.Sleep(time.Hour)
		return 0
	case "stderr-flood":
		// Writes many stderr lines and no stdout; a relay that does not drain
		// stderr would block it for ever.
		w := bufio.NewWriter(os.Stderr)
		for i := 0; i < 20000; i++ {
			fmt.Fprintf(w, "log line %d with some padding to fill the pipe quickly\n", i)
		}
		w.Flush()
		return 0
	case "mcp-server":
		return runMCPServer()
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
	return 2
}
