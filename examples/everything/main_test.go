package everything_test

import (
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/leakcheck"
)

// TestMain fails the run if goroutines from this package or mcp-go outlive
// the tests: every server and client started here must be shut down.
func TestMain(m *testing.M) {
	leakcheck.Main(m, 5*time.Second, "github.com/mark3labs/mcp-go", "mcpchaos/examples")
}
