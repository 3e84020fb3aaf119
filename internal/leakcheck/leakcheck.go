package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Main runs the tests, then, if they passed, waits up to patience for the
// goroutines whose stacks mention any of markers (package paths) to end,
// and fails the run with their stacks when some do not. It does not return.
func Main(m *testing.M, patience time.Duration, markers ...string) {
	code := m.Run()
	if code == 0 {
		if leaks := Lingering(patience, markers...); leaks != "" {
			fmt.Fprintf(os.Stderr, "goroutines left behind:\n\n%s\n", leaks)
			code = 1
		}
	}
	os.Exit(code)
}

// Lingering waits up to patience for the goroutines whose stacks mention
// any of markers to end, and returns the stacks of those that do not.
func Lingering(patience time.Duration, markers ...string) string {
	deadline := time.Now().Add(patience)
	for {
		buf := make([]byte, 1<<20)
		// The first stack is this goroutine's own.
		stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")[1:]
		var leaks []string
		for _, s := range stacks {
			for _, m := range markers {
				if strings.Contains(s, m) {
					leaks = append(leaks, s)
					break
				}
			}
		}
		if len(leaks) == 0 || time.Now().After(deadline) {
			return strings.Join(leaks, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
