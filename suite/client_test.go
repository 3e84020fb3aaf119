package suite

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
)

// clientModeEnv makes the test binary a client program for test-client.
const clientModeEnv = "MCPCHAOS_SUITE_CLIENT"

// runTestClientProgram is a small raw JSON-RPC MCP client: it launches the
// server from $MCPCHAOS_SERVER_COMMAND, initializes, calls echo, and exits 0;
// it exits 1 if the server's output ends before the answer. In mode
// "deadlock-on-list-changed" it reacts to notifications/tools/list_changed by
// asking for tools/list and waiting for the answer on its only reading loop,
// the agent-framework deadlock; in mode "never-launches" it ignores the server;
// in mode "no-call" it initializes and exits without calling a tool.
//
// Modes that are not MCP clients, for the set-up errors: "sleeps" never
// launches the server and never exits; "not-mcp" launches it, writes a line
// that is JSON-RPC but no MCP session's opening, and exits 0; over HTTP
// (MCPCHAOS_SERVER_URL set) "not-mcp" POSTs that line, and "sleeps" never
// connects.
func runTestClientProgram(mode string) int {
	switch mode {
	case "never-launches":
		return 0
	case "sleeps":
		time.Sleep(time.Hour)
		return 0
	}
	if u := os.Getenv(ServerURLEnv); u != "" && mode == "not-mcp" {
		resp, err := http.Post(u, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"hello"}`))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		resp.Body.Close()
		return 0
	}
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv(ServerCommandEnv)), &argv); err != nil || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "no server command:", err)
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer cmd.Wait()
	defer in.Close()
	send := func(s string) { io.WriteString(in, s+"\n") }
	if mode == "not-mcp" {
		send(`{"jsonrpc":"2.0","id":1,"method":"hello"}`)
		return 0
	}
	lines := bufio.NewScanner(out)
	lines.Buffer(make([]byte, 1<<20), 64<<20)
	// await reads until the answer to id, answering the server's requests.
	await := func(id string) bool {
		for lines.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(lines.Bytes(), &m) != nil {
				continue
			}
			switch {
			case m.Method == "notifications/tools/list_changed" && mode == "deadlock-on-list-changed":
				send(`{"jsonrpc":"2.0","id":99,"method":"tools/list"}`)
				time.Sleep(time.Hour) // waits for an answer that only this loop could read
			case m.Method != "" && m.ID != nil:
				send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
			case m.Method == "" && string(m.ID) == id:
				return true
			}
		}
		return false
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"suite-test-client","version":"1"}}}`)
	if !await("1") {
		fmt.Fprintln(os.Stderr, "the server ended before answering initialize")
		return 1
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if mode == "no-call" {
		return 0 // a client that only connects: no scenario's moment comes
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p"}}}`)
	if !await("2") {
		fmt.Fprintln(os.Stderr, "the server ended before answering tools/call")
		return 1
	}
	return 0
}

func runClientMatrix(t *testing.T, mode string, scenarios []faults.Scenario) (*reports.Report, error) {
	t.Helper()
	t.Setenv(clientModeEnv, mode)
	o := ClientOptions{
		Client:    []string{os.Args[0]},
		Server:    []string{mcpchaosBin, "serve"},
		Self:      []string{mcpchaosBin},
		Scenarios: scenarios,
		Seed:      1,
		Deadline:  6 * time.Second, // slow-server holds answers 2s: a loaded machine needs the margin
		HangAfter: 6 * time.Second, // the planted hangs are stopped at the deadline
		Grace:     time.Second,
		Parallel:  2,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return RunClient(ctx, o)
}

func TestClientMatrix(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want []found
	}{
		{"well-behaved", nil},
		{"deadlock-on-list-changed", []found{{"list-changed-mid-call", "hang", ""}}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			start := time.Now()
			report, err := runClientMatrix(t, tc.mode, faults.ClientScenarios())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("client matrix took %s", time.Since(start).Round(time.Millisecond))
			if diff := cmp.Diff(tc.want, summarize(report.Findings)); diff != "" {
				var b strings.Builder
				reports.WriteSummary(&b, report)
				t.Errorf("findings (-want +got):\n%s\n%s", diff, b.String())
			}
		})
	}
}

// A client that never calls a tool reaches no default scenario's moment:
// every scenario is indeterminate and the run passes, so the baseline says
// that nothing was tested, and what to do.
func TestAMatrixWhereNothingFiredSaysSo(t *testing.T) {
	report, err := runClientMatrix(t, "no-call", faults.ClientScenarios())
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range report.Scenarios {
		if sc.Outcome != reports.OutcomeIndeterminate {
			t.Errorf("%s: %s, want indeterminate", sc.Name, sc.Outcome)
		}
	}
	want := fmt.Sprintf("none of the %d fault scenarios could fire, so this run tested the baseline alone", len(faults.ClientScenarios()))
	if !slices.ContainsFunc(report.Baseline.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
		t.Errorf("baseline notes %q, want one starting %q", report.Baseline.Notes, want)
	}

	// One scenario that fires is enough to say nothing.
	report, err = runClientMatrix(t, "well-behaved", faults.ClientScenarios()[:2])
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range report.Baseline.Notes {
		if strings.HasPrefix(n, "none of the") {
			t.Errorf("baseline note %q in a run whose scenarios fired", n)
		}
	}
}

// A program that is not an MCP client is a set-up error that says what it
// did: it exits at once, never reads $MCPCHAOS_SERVER_COMMAND (and is
// stopped at its deadline, not at the hang horizon), or starts the server
// but never opens a session.
func TestClientThatIsNotAnMCPClient(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"never-launches", []string{"the client did not start the server from $MCPCHAOS_SERVER_COMMAND: it exited with status 0 after "}},
		{"sleeps", []string{"the client did not start the server from $MCPCHAOS_SERVER_COMMAND: it was stopped by mcpchaos after "}},
		{"not-mcp", []string{"the client started the server from $MCPCHAOS_SERVER_COMMAND but opened no MCP session on it: it sent no initialize (nor server/discover) request, and it exited with status 0", "is it an MCP client?"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv(clientModeEnv, tc.mode)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			// The default hang horizon: a client that never starts the
			// server is stopped at its deadline all the same.
			_, err := RunClient(ctx, ClientOptions{Client: []string{os.Args[0]}, Server: []string{mcpchaosBin, "serve"}, Self: []string{mcpchaosBin},
				Scenarios: faults.ClientScenarios(), Seed: 1, Deadline: 3 * time.Second, Grace: time.Second})
			var setup *SetupError
			if !errors.As(err, &setup) {
				t.Fatalf("err = %v, want a set-up error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %q", err, w)
				}
			}
			// Stopped at its 3s deadline, not at the default horizon.
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the set-up error took %s", took)
			}
		})
	}
}
