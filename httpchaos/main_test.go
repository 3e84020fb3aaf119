package httpchaos_test

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if a goroutine of the proxy (or of the mcp-go
// peers the tests run) outlives the tests: no exchange, stream or reader
// of a cut connection may outlast its session.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaks := lingering(5 * time.Second); leaks != "" {
			fmt.Fprintf(os.Stderr, "goroutines left behind:\n\n%s\n", leaks)
			code = 1
		}
	}
	os.Exit(code)
}

func lingering(patience time.Duration) string {
	deadline := time.Now().Add(patience)
	for {
		buf := make([]byte, 1<<20)
		stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")[1:]
		var leaks []string
		for _, s := range stacks {
			if strings.Contains(s, "mcpchaos/httpchaos.") || strings.Contains(s, "github.com/mark3labs/mcp-go") {
				leaks = append(leaks, s)
			}
		}
		if len(leaks) == 0 || time.Now().After(deadline) {
			return strings.Join(leaks, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
