//go:build linux

package suite

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
)

// Issue 41: mcpchaos test --url http://127.0.0.1:P/mcp -- CMD while another
// process already listened on P probed that process, and blamed the
// user's server (its bind error on stderr) with a crash. The run must
// refuse before starting CMD, naming the port and who holds it.
func TestAPortInUseBeforeTheServerStartsIsRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	u, _ := url.Parse("http://" + addr + "/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Run(ctx, Options{Command: []string{mcpchaosBin, "serve", "--http", addr}, URL: u,
		Scenarios: []faults.Scenario{}, Seed: 1, Deadline: 2 * time.Second, Grace: time.Second})
	want := fmt.Sprintf("port %s of %s is already in use by process %d (", port, u, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "give the URL and the server's command another port") {
		t.Fatalf("err = %v\nwant one starting %q and saying what to do", err, want)
	}
}

// A port taken after the check, by a process that is not the server's,
// answers in the server's place: the run refuses it rather than test it.
func TestAPortTakenByAnotherProcessIsNotTheServers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	u, _ := url.Parse("http://" + addr + "/mcp")
	taken := make(chan net.Listener, 1)
	go func() {
		time.Sleep(300 * time.Millisecond) // past the check, while the server starts
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
		}
		taken <- l
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Run(ctx, Options{Command: []string{"sleep", "30"}, URL: u,
		Scenarios: []faults.Scenario{}, Seed: 1, Deadline: 2 * time.Second, Grace: time.Second, StartTimeout: 10 * time.Second})
	if l := <-taken; l != nil {
		l.Close()
	}
	want := fmt.Sprintf("the HTTP server's port is not its own: port %s answers, but process %d", u.Port(), os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant one starting %q", err, want)
	}
}
