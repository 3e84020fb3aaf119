package httppipe_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpchaos/mcpchaos/httppipe"
	"github.com/mcpchaos/mcpchaos/internal/leakcheck"
)

func TestDialRefusesABadConfig(t *testing.T) {
	for _, tc := range []struct{ name, url string }{
		{"no URL", ""},
		{"not HTTP", "ftp://example.com/mcp"},
		{"relative", "/mcp"},
		{"no host", "http:///mcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg httppipe.Config
			if tc.url != "" {
				u, err := url.Parse(tc.url)
				if err != nil {
					t.Fatal(err)
				}
				cfg.URL = u
			}
			if _, err := httppipe.Dial(cfg); err == nil {
				t.Errorf("Dial(%q) succeeded", tc.url)
			}
		})
	}
}

// Reader.Close ends a session whose server never answers: the request in
// flight is cancelled, a Read in progress returns, writes fail, and no
// goroutine of the Pipe is left when Close returns.
func TestReaderCloseEndsEverything(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the server notices the client leave only after
		<-r.Context().Done()
	}))
	defer srv.Close()
	p := dial(t, srv.URL+"/mcp", nil)
	if _, err := io.WriteString(p.Writer(), `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := p.Reader().Read(make([]byte, 10))
		read <- err
	}()
	time.Sleep(50 * time.Millisecond) // the POST and the Read under way
	closed := make(chan struct{})
	go func() {
		p.Reader().Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(testTimeout):
		t.Fatal("Reader.Close did not return")
	}
	if err := <-read; err == nil {
		t.Error("the Read in progress returned no error")
	}
	if leaks := leakcheck.Lingering(0, "mcpchaos/httppipe."); leaks != "" {
		t.Errorf("goroutines of the pipe after Reader.Close:\n%s", leaks)
	}
	if _, err := io.WriteString(p.Writer(), "{}\n"); err == nil {
		t.Error("a Write after Reader.Close succeeded")
	}
	if err := p.Writer().Close(); err != nil {
		t.Errorf("Writer.Close after Reader.Close: %v", err)
	}
}

// A slow request holds up nothing: each message has its own POST, and
// the writer's close lets the one still in flight finish before the
// reader's end. Messages may come in pieces.
func TestRequestsAreConcurrent(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(string(body), `"slow"`):
			<-release
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"slow":true}}`)
		case strings.Contains(string(body), `"ping"`):
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{}}`)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	defer srv.Close()
	p := dial(t, srv.URL+"/mcp", nil)
	defer p.Reader().Close()
	lines := readLines(p.Reader())
	w := p.Writer()
	for _, piece := range []string{`{"jsonrpc":"2.0","id":1,"method":"slow"}` + "\n" + `{"jsonrpc":"2.0",`, `"id":2,"method":"ping"}`, "\n"} {
		if _, err := io.WriteString(w, piece); err != nil {
			t.Fatal(err)
		}
	}
	got := lines.next(t, 1)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("closing twice: %v", err)
	}
	if _, err := io.WriteString(w, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n"); err == nil {
		t.Error("a Write after Writer.Close succeeded")
	}
	close(release)
	got = append(got, lines.rest(t)...)
	want := []string{`{"jsonrpc":"2.0","id":2,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":{"slow":true}}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

// A request of the stateless revision carries its own protocol version as
// its header, with the Mcp-Method and Mcp-Name headers that revision
// mirrors from the body.
func TestStatelessRequestHeaders(t *testing.T) {
	got := make(chan []string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- []string{r.Header.Get("MCP-Protocol-Version"), r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name")}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
	}))
	defer srv.Close()
	p := dial(t, srv.URL+"/mcp", nil)
	defer p.Reader().Close()
	lines := readLines(p.Reader())
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	if _, err := io.WriteString(p.Writer(), msg+"\n"); err != nil {
		t.Fatal(err)
	}
	lines.next(t, 1)
	if diff := cmp.Diff([]string{"2026-07-28", "tools/call", "echo"}, <-got); diff != "" {
		t.Errorf("MCP-Protocol-Version, Mcp-Method, Mcp-Name (-want +got):\n%s", diff)
	}
}

// An event larger than the size cap ends its stream without a line, and
// without harm: the next request is answered.
func TestOverlongEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"big"`) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+strings.Repeat("x", 64<<20)+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{}}`)
	}))
	defer srv.Close()
	p := dial(t, srv.URL+"/mcp", nil)
	defer p.Reader().Close()
	lines := readLines(p.Reader())
	w := p.Writer()
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"big"}`+"\n")
	io.WriteString(w, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	w.Close()
	if diff := cmp.Diff([]string{`{"jsonrpc":"2.0","id":2,"result":{}}`}, lines.rest(t)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
