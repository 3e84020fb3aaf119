package proof

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/httpchaos"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// pyHTTPClient is the Python SDK's high-level client (mcp 2.3.0, from the
// corpus venv) over streamable HTTP: it lists the tools and calls echo.
const pyHTTPClient = `
import asyncio, sys
from mcp import Client
async def main(url):
    async with Client(url) as c:
        tools = await c.list_tools()
        r = await c.call_tool("echo", {"message": "through mcpchaos"})
        print(len(tools.tools), r.content[0].text)
asyncio.run(main(sys.argv[1]))
`

// Real peers no one on this project wrote, over streamable HTTP through
// the proxy: server-everything (npm) and the Python SDK's client. With no
// fault the judge finds nothing (the 400 the stateful server answers to
// server/discover is how the client falls back to initialize, not a hang);
// with the echo answer's stream cut, the client resumes with Last-Event-ID,
// the server replays the answer, and the judge counts it once.
func TestHTTPProxyRealPeers(t *testing.T) {
	dir := corpusDir(t)
	for _, tc := range []struct {
		name, fault string
		resumed     bool
	}{
		{"no fault", "", false},
		{"cut before the answer, resumed", "eof:on=s2c:response:tools/call,position=before", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := startEverythingHTTP(t, dir)
			var fs []*faults.Fault
			if tc.fault != "" {
				f, err := faults.Parse(tc.fault)
				if err != nil {
					t.Fatal(err)
				}
				fs = append(fs, f)
			}
			rec := chaos.NewMemoryRecorder()
			p, err := httpchaos.New(httpchaos.Config{Upstream: upstream, Plan: faults.NewPlan(7, fs), Recorder: rec})
			if err != nil {
				t.Fatal(err)
			}
			front := httptest.NewServer(p)
			defer front.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, filepath.Join(dir, "py/bin/python"), "-c", pyHTTPClient, front.URL+"/mcp").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "Echo: through mcpchaos") {
				t.Fatalf("the Python client through the proxy: %v\n%s", err, out)
			}
			if err := p.Close("the client finished"); err != nil {
				t.Error(err)
			}
			events := rec.Events()
			v := judge.Session(events)
			if len(v.Findings) != 0 || len(v.Indeterminate) != 0 {
				t.Errorf("verdict %+v", v)
			}
			var resumed, replayed bool
			answers := map[string]int{}
			for _, e := range events {
				if e.Type == wire.EventHTTP && e.HTTP == "GET /mcp" && strings.Contains(e.Detail, "Last-Event-ID: ") {
					resumed = true
				}
				if e.Type == wire.EventReceived && e.Kind == "response" && e.EventID != "" {
					if answers[e.EventID]++; answers[e.EventID] == 2 {
						replayed = true
					}
				}
			}
			if resumed != tc.resumed || replayed != tc.resumed {
				t.Errorf("resumed %v, replayed %v; want %v", resumed, replayed, tc.resumed)
			}
		})
	}
}

// startEverythingHTTP runs server-everything's streamable HTTP mode on a
// free port and returns its MCP endpoint once it listens.
func startEverythingHTTP(t *testing.T, dir string) *url.URL {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", filepath.Join(dir, "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan struct{})
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			if strings.Contains(s.Text(), "listening on port") {
				close(ready)
				break
			}
		}
		for s.Scan() {
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything did not listen within 30s")
	}
	u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	return u
}
