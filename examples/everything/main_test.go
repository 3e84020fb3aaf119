package everything_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if goroutines from this package or mcp-go outlive
// the tests: every server and client started here must be shut down.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaks := lingeringGoroutines(5 * time.Second); leaks != "" {
			fmt.Fprintf(os.Stderr, "goroutines left behind:\n\n%s\n", leaks)
			code = 1
		}
	}
	os.Exit(code)
}

// lingeringGoroutines waits up to patience for goroutines running mcp-go or
// example code to finish, and returns the stacks of those that do not.
func lingeringGoroutines(patience time.Duration) string {
	deadline := time.Now().Add(patience)
	for {
		buf := make([]byte, 1<<20)
		// The first stack is this goroutine's own.
		stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")[1:]
		var leaks []string
		for _, s := range stacks {
			if strings.Contains(s, "github.com/mark3labs/mcp-go") || strings.Contains(s, "mcpchaos/examples") {
				leaks = append(leaks, s)
			}
		}
		if len(leaks) == 0 || time.Now().After(deadline) {
			return strings.Join(leaks, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
