package mcpchaostest_test

import (
	"fmt"
	"testing"

	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/mcpchaostest"
)

// An mcp-go server built in the test's own process, run through two HTTP
// scenarios: a connection cut while three calls are in flight, and a
// cancellation racing a result.
func ExampleCheck() {
	report, err := mcpchaostest.Check(mcpchaostest.Config{
		Server:    everything.New(),
		Scenarios: []string{"cut-inflight", "cancel-race"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range report.Scenarios {
		fmt.Println(s.Name, s.Outcome)
	}
	fmt.Println("outcome:", report.Outcome)
	// Output:
	// cut-inflight pass
	// cancel-race pass
	// outcome: pass
}

// In a test, Run fails it with each finding and its repro line. A stdio
// server is given as a command, started fresh for each scenario.
func ExampleRun() {
	t := &testing.T{} // in a real test: the *testing.T of TestXxx
	mcpchaostest.Run(t, mcpchaostest.Config{
		Command:   []string{"go", "run", "./cmd/myserver"},
		Scenarios: []string{"eof-inflight", "stall-s2c"},
	})
}
