package httppipe_test

import (
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/leakcheck"
)

// TestMain fails the run if a goroutine of a Pipe (or of the mcp-go
// servers the tests run) outlives the tests: once both its ends are
// closed, nothing a Pipe started may still run.
func TestMain(m *testing.M) {
	leakcheck.Main(m, 5*time.Second, "mcpchaos/httppipe.", "github.com/mark3labs/mcp-go")
}
