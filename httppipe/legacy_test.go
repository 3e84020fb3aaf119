package httppipe_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// legacyServer is a scripted HTTP+SSE server: a GET opens the stream,
// whose first event names /messages (relative, with a query) as the
// endpoint; each POST there is answered 202 and its answer, a result
// echoing the method, is sent on the stream. Other POSTs are refused.
type legacyServer struct {
	out chan string // messages for the stream
	// hangUp, when closed, ends the stream.
	hangUp chan struct{}
}

func newLegacyServer() *legacyServer {
	return &legacyServer{out: make(chan string, 10), hangUp: make(chan struct{})}
}

func (s *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": hello\n\nevent: endpoint\ndata: messages?sessionId=abc\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case msg := <-s.out:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
				w.(http.Flusher).Flush()
			case <-s.hangUp:
				return
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost && r.URL.Path == "/messages" && r.URL.Query().Get("sessionId") == "abc":
		body, _ := io.ReadAll(r.Body)
		id, method := between(string(body), `"id":`, `,`), between(string(body), `"method":"`, `"`)
		w.WriteHeader(http.StatusAccepted)
		if id != "" {
			s.out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"method":%q}}`, id, method)
		}
	default:
		http.Error(w, "not here", http.StatusMethodNotAllowed)
	}
}

func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, to)
	return v
}

// The legacy transport, named by a URL ending in /sse or found by the
// refusal of the initialize POST: messages go to the endpoint the stream
// names, answers come on the stream, and the writer's close ends the
// stream, hence the reader, once every request has its answer.
func TestLegacy(t *testing.T) {
	for _, path := range []string{"/sse", "/events"} {
		t.Run(path, func(t *testing.T) {
			s := newLegacyServer()
			srv := httptest.NewServer(s)
			defer srv.Close()
			p := dial(t, srv.URL+path, nil)
			defer p.Reader().Close()
			lines := readLines(p.Reader())
			w := p.Writer()
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n")
			got := lines.next(t, 1)
			io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
			w.Close()
			got = append(got, lines.rest(t)...)
			want := []string{
				`{"jsonrpc":"2.0","id":1,"result":{"method":"initialize"}}`,
				`{"jsonrpc":"2.0","id":2,"result":{"method":"tools/list"}}`,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// The legacy stream's end is the reader's: nothing more can come.
func TestLegacyStreamEnd(t *testing.T) {
	s := newLegacyServer()
	srv := httptest.NewServer(s)
	defer srv.Close()
	p := dial(t, srv.URL+"/sse", nil)
	defer p.Reader().Close()
	lines := readLines(p.Reader())
	io.WriteString(p.Writer(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n")
	lines.next(t, 1)
	close(s.hangUp)
	if rest := lines.rest(t); len(rest) > 0 {
		t.Errorf("after the stream's end: %q", rest)
	}
}

// A server that refuses the initialize POST and has no legacy stream
// either: the refusal is the answer, and the next request goes to the
// endpoint again.
func TestNoLegacyFallback(t *testing.T) {
	s := &scripted{post: map[string]http.HandlerFunc{
		"initialize": reply(http.StatusNotFound, "text/plain", "no such endpoint"),
		"ping":       reply(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":2,"result":{}}`),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	p := dial(t, srv.URL+"/mcp", http.Header{"Authorization": {"Bearer t"}})
	defer p.Reader().Close()
	lines := readLines(p.Reader())
	w := p.Writer()
	io.WriteString(w, initRequest+"\n")
	got := lines.next(t, 1)
	io.WriteString(w, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	got = append(got, lines.next(t, 1)...)
	w.Close()
	got = append(got, lines.rest(t)...)
	want := []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"HTTP 404 Not Found: no such endpoint"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	wantLog := []string{
		"GET session= version= last-event-id=",
		"POST initialize session= version=",
		"POST ping session= version=",
	}
	if diff := cmp.Diff(wantLog, s.sortedLog()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
