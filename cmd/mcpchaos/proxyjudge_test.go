package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/reports"
)

// The report mcpchaos proxy --report writes, judged as the session went,
// and mcpchaos judge on its transcript, judged after, say the same: a
// session ended by DELETE, one abandoned, one whose answer a fault dropped
// while its client gave up, one answered past the deadline, with others
// going on beside them, through the real proxy to the example server
// (issue 31: the streaming judge lets go of ended sessions, and must not
// judge differently for it).
func TestProxyReportIsTheBatchJudgeOfItsTranscript(t *testing.T) {
	upstream := httptest.NewServer(server.NewStreamableHTTPServer(everything.New(), server.WithStateful(true)))
	defer upstream.Close()
	dir := t.TempDir()
	live, transcript, batch := filepath.Join(dir, "live.json"), filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "batch.json")
	endpoint, done := startProxy(t, "--upstream", upstream.URL+"/mcp", "--listen", "127.0.0.1:0", "--seed", "5",
		"--deadline", "400ms", "--fault", "drop:on=s2c:response:tools/call,tool=slow,id=8", "--duration", "5s",
		"--report", live, "--transcript", transcript)
	c := &rawSession{url: endpoint, hc: &http.Client{Timeout: 3 * time.Second}}

	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kind := i % 4
			if i == 6 {
				// One session is enough for the drop (it fires once).
				kind = 0
			}
			errs <- c.session(kind, fmt.Sprintf("s%d", i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	select {
	case code := <-done:
		if code != exitOK && code != exitFindings {
			t.Fatalf("proxy: exit %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the proxy did not end after --duration")
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"judge", "--report", batch, transcript}, strings.NewReader(""), &stdout, &stderr); code != exitOK && code != exitFindings {
		t.Fatalf("judge: exit %d, stderr %s", code, stderr.String())
	}
	got, want := readReportFile(t, live), readReportFile(t, batch)
	if len(want.Findings)+len(want.Scenarios[0].Notes) == 0 {
		t.Fatalf("the batch judge found nothing and noted nothing: the comparison shows nothing (scenarios %+v)", want.Scenarios)
	}
	if diff := cmp.Diff(want.Findings, got.Findings); diff != "" {
		t.Errorf("findings of the streaming report (+) and of mcpchaos judge (-):\n%s", diff)
	}
	type verdict struct {
		Outcome              string
		Indeterminate, Notes []string
	}
	of := func(r *reports.Report) verdict {
		s := r.Scenarios[0]
		return verdict{s.Outcome, s.Indeterminate, s.Notes}
	}
	if diff := cmp.Diff(of(want), of(got)); diff != "" {
		t.Errorf("verdict of the streaming report (+) and of mcpchaos judge (-):\n%s", diff)
	}
	t.Logf("%d findings, notes %q", len(got.Findings), got.Scenarios[0].Notes)
}

// rawSession speaks streamable HTTP as a client SDK does, with the
// session's end in the test's hands.
type rawSession struct {
	url string
	hc  *http.Client
}

func (c *rawSession) post(ctx context.Context, sid string, msg string) (*http.Response, []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// session runs one session that ends the way kind says: 0 DELETE, 1
// abandoned, 2 a slow call (id 8) whose answer the fault drops (the client gives
// up after 1 s, then DELETEs), 3 a slow call answered past the deadline.
func (c *rawSession) session(kind int, name string) error {
	ctx := context.Background()
	resp, _, err := c.post(ctx, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"`+name+`","version":"1"}}}`)
	if err != nil {
		return fmt.Errorf("%s: initialize: %v", name, err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return fmt.Errorf("%s: initialize answered %s with no session id", name, resp.Status)
	}
	if _, _, err := c.post(ctx, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return fmt.Errorf("%s: initialized: %v", name, err)
	}
	for i := 1; i <= 3; i++ {
		_, body, err := c.post(ctx, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s %d"}}}`, i, name, i))
		if err != nil || !json.Valid(body) && !bytes.Contains(body, []byte("data:")) {
			return fmt.Errorf("%s: call %d: %v %q", name, i, err, body)
		}
	}
	switch kind {
	case 1:
		return nil
	case 2:
		giveUp, cancel := context.WithTimeout(ctx, time.Second)
		_, body, err := c.post(giveUp, sid, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"slow","arguments":{"ms":100,"steps":1}}}`)
		cancel()
		if err == nil && bytes.Contains(body, []byte(`"result"`)) {
			return fmt.Errorf("%s: the slow call was answered (%s): the drop fault did not fire", name, body)
		}
	case 3:
		if _, _, err := c.post(ctx, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{"ms":800,"steps":1}}}`); err != nil {
			return fmt.Errorf("%s: call: %v", name, err)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err = c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: DELETE: %v", name, err)
	}
	resp.Body.Close()
	return nil
}
