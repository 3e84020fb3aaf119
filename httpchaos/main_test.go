package httpchaos_test

import (
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/leakcheck"
)

// TestMain fails the run if a goroutine of the proxy (or of the mcp-go
// peers the tests run) outlives the tests: no exchange, stream or reader
// of a cut connection may outlast its session.
func TestMain(m *testing.M) {
	leakcheck.Main(m, 5*time.Second, "mcpchaos/httpchaos.", "github.com/mark3labs/mcp-go")
}
