package rawmcp

import (
	"flag"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/examples/servers/internal/mcptest"
)

// stdioServer is what this test binary runs as when mcptest starts it: a
// server on the process's own stdio, so that ServeStdio's handling of the
// process (signals, a broken stdout) can be tested.
func stdioServer() {
	stuck := flag.Bool("stuck", false, "block the read loop on the first notification")
	flag.Parse()
	srv := &Server{Name: "stdio", Tools: []Tool{Echo(), Slow()}}
	if *stuck {
		srv.OnNotification = func(Notification) { select {} }
	}
	srv.ServeStdio()
}

// A client that closes its end of our stdout (mcpchaos's half-close-s2c) costs
// the answers, not the process: it exits 0 when stdin closes, as usual.
func TestServeStdioOutlivesItsStdout(t *testing.T) {
	p := mcptest.Start(t)
	p.Open(false)
	p.CallTool("slow", map[string]any{"ms": 100}, "tok")
	p.CloseOutput()
	logged := p.WaitStderr("broken pipe", mcptest.Wait)
	if !p.Running() {
		t.Fatalf("the server died (signal %q) when its stdout broke", p.ExitSignal())
	}
	if !logged {
		t.Errorf("no word of the broken pipe on stderr within %v; stderr:\n%s", mcptest.Wait, p.Stderr())
	}
	p.CloseStdin()
	if code, ok := p.Exit(mcptest.Wait); !ok || code != 0 {
		t.Errorf("after stdin closed: exit status %d, exited %v; want 0, true", code, ok)
	}
}

func TestServeStdioDiesOfSIGTERM(t *testing.T) {
	p := mcptest.Start(t)
	p.Open(false)
	p.Signal(syscall.SIGTERM)
	if _, ok := p.Exit(mcptest.Wait); !ok {
		t.Fatalf("the server ignored SIGTERM for %v", mcptest.Wait)
	}
	if sig := p.ExitSignal(); sig != "terminated" {
		t.Errorf("the server's end: signal %q, want terminated (SIGTERM)", sig)
	}
}

// A server whose every goroutine waits is still alive, stuck, as a real one
// would be: not killed by the Go runtime's "all goroutines are asleep". (The
// race detector turns that check off, so only a run without -race can fail
// here.)
func TestStuckServerStaysAlive(t *testing.T) {
	p := mcptest.Start(t, "--stuck")
	p.Open(false)
	p.Notify("notifications/roots/list_changed", nil)
	ping := p.Request("ping", nil)
	if _, ok := p.Response(ping, time.Second); ok {
		t.Fatal("the stuck server answered a ping")
	}
	if !p.Running() {
		t.Fatalf("the stuck server died; stderr:\n%s", p.Stderr())
	}
}
