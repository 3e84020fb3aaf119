package main

import (
	"bufio"
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// mcpchaos proxy end to end: a real mcp-go client calls through it to a
// real mcp-go streamable HTTP server; --duration ends the session, and the
// report and the transcript (judged again offline) agree.
func TestProxyReportAndTranscript(t *testing.T) {
	upstream := httptest.NewServer(server.NewStreamableHTTPServer(everything.New()))
	defer upstream.Close()
	dir := t.TempDir()
	reportPath, transcriptPath := filepath.Join(dir, "report.json"), filepath.Join(dir, "t.jsonl")
	endpoint, done := startProxy(t, "--upstream", upstream.URL+"/mcp", "--listen", "127.0.0.1:0", "--seed", "3",
		"--fault", "delay:on=s2c:response:tools/call,for=50ms", "--duration", "2s",
		"--report", reportPath, "--transcript", transcriptPath)

	c, err := client.NewStreamableHttpClient(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "proxy-test", Version: "0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize through mcpchaos proxy: %v", err)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name, call.Params.Arguments = "echo", map[string]any{"text": "hi"}
	if _, err := c.CallTool(ctx, call); err != nil {
		t.Fatalf("echo through mcpchaos proxy: %v", err)
	}
	c.Close()

	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d, want 0", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the proxy did not end after --duration")
	}
	report := readReportFile(t, reportPath)
	if report.Outcome != "pass" || report.Target.URL != upstream.URL+"/mcp" || len(report.Scenarios) != 1 {
		t.Errorf("report: outcome %s, target %+v, %d scenarios", report.Outcome, report.Target, len(report.Scenarios))
	}
	events := readTranscript(t, transcriptPath)
	var faultsFired []string
	for _, e := range events {
		if e.Type == wire.EventFault {
			faultsFired = append(faultsFired, e.Fault+" "+e.Detail)
		}
	}
	if diff := cmp.Diff([]string{"delay#1 hold the message for 50ms"}, faultsFired); diff != "" {
		t.Errorf("faults (-want +got):\n%s", diff)
	}
	if last := events[len(events)-1]; last.Type != wire.EventSessionEnd || last.Detail != "--duration 2s ran out" {
		t.Errorf("last event %+v, want the session's end", last)
	}
	if v := judge.Session(events); len(v.Findings) != 0 || len(v.Indeterminate) != 0 {
		t.Errorf("judged offline: %+v", v)
	}
}

// startProxy runs mcpchaos proxy with args, and returns the endpoint its
// start line names and where its exit status will come.
func startProxy(t *testing.T, args ...string) (endpoint string, done <-chan int) {
	t.Helper()
	stderrR, stderrW := io.Pipe()
	exited := make(chan int, 1)
	go func() {
		exited <- run(append([]string{"proxy"}, args...), strings.NewReader(""), io.Discard, stderrW)
		stderrW.Close()
	}()
	lines := bufio.NewScanner(stderrR)
	if !lines.Scan() {
		t.Fatal("no start line")
	}
	m := regexp.MustCompile(`point the client at (\S+) `).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("start line %q names no endpoint", lines.Text())
	}
	go io.Copy(io.Discard, stderrR)
	return m[1], exited
}
