package httppipe_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scripted is a streamable HTTP server whose answers a test writes: each
// POST is answered by the handler for its JSON-RPC method (none: 202), a
// GET by get (nil: 405), a DELETE with 200. It logs every request, with
// the headers the client must send, as one line.
type scripted struct {
	post map[string]http.HandlerFunc
	get  http.HandlerFunc

	mu   sync.Mutex
	log  []string
	gets int
}

func (s *scripted) record(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, line)
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	line := fmt.Sprintf("session=%s", r.Header.Get("Mcp-Session-Id"))
	if r.Header.Get("Authorization") != "Bearer t" {
		line += " (no Authorization)"
	}
	switch r.Method {
	case http.MethodDelete:
		s.record("DELETE " + line)
	case http.MethodGet:
		if r.Header.Get("Accept") != "text/event-stream" {
			line += " (Accept: " + r.Header.Get("Accept") + ")"
		}
		s.record(fmt.Sprintf("GET %s version=%s last-event-id=%s", line, r.Header.Get("MCP-Protocol-Version"), r.Header.Get("Last-Event-ID")))
		if s.get == nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		s.get(w, r)
	case http.MethodPost:
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "application/json, text/event-stream" {
			line += fmt.Sprintf(" (Content-Type: %s, Accept: %s)", r.Header.Get("Content-Type"), r.Header.Get("Accept"))
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		s.record(fmt.Sprintf("POST %s %s version=%s", m.Method, line, r.Header.Get("MCP-Protocol-Version")))
		if h := s.post[m.Method]; h != nil {
			h(w, r)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// await waits until the log has line.
func (s *scripted) await(t *testing.T, line string) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		found := slices.Contains(s.log, line)
		s.mu.Unlock()
		if found {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Errorf("no %q in the server's log within %v", line, testTimeout)
}

func (s *scripted) sortedLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	log := slices.Clone(s.log)
	slices.Sort(log)
	return log
}

// reply answers with a fixed body of a content type.
func reply(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// events answers with an event stream that ends after body.
func events(body string) http.HandlerFunc {
	return reply(http.StatusOK, "text/event-stream", body)
}

const (
	initRequest = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`
	initResult  = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	progress    = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	callRequest = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`
	callResult  = `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`
)

// initialize answers as a stateful server does, with a session id.
func initialize(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "s-1")
	reply(http.StatusOK, "application/json", initResult)(w, r)
}

// handshake is the exchanges of the initialize handshake, with the GET
// stream the client opens after it awaited.
var handshake = []exchange{
	{send: initRequest, want: []string{initResult}},
	{send: initialized, await: "GET session=s-1 version=2025-11-25 last-event-id="},
}

// handshakeLog is what handshake logs.
var handshakeLog = []string{
	"POST initialize session= version=",
	"POST notifications/initialized session=s-1 version=2025-11-25",
	"GET session=s-1 version=2025-11-25 last-event-id=",
}

type exchange struct {
	send string
	// want are the lines the reader gets for it; the server's URL is
	// spelled SERVER.
	want []string
	// await is a line of the server's log to wait for before going on.
	await string
}

// A scripted server's answers, as the reader gets them, and the requests
// the client made for them. After the last exchange the writer is closed,
// and nothing more may come before the reader's end: an answer delivered
// twice would.
func TestScripted(t *testing.T) {
	for _, tc := range []struct {
		name      string
		post      map[string]http.HandlerFunc
		get       http.HandlerFunc
		exchanges []exchange
		// wantLog is the server's log, after handshakeLog, sorted with it.
		wantLog []string
	}{
		{
			name:      "the session id and version are sent once known, notifications are accepted, the writer's close deletes the session",
			post:      map[string]http.HandlerFunc{"ping": reply(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":2,"result":{}}`)},
			exchanges: []exchange{{send: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, want: []string{`{"jsonrpc":"2.0","id":2,"result":{}}`}}},
			wantLog:   []string{"POST ping session=s-1 version=2025-11-25", "DELETE session=s-1"},
		},
		{
			name: "a JSON array body is a line per message, each on one line",
			post: map[string]http.HandlerFunc{"tools/list": reply(http.StatusOK, "application/json; charset=utf-8",
				"[\n  "+progress+",\n  {\"jsonrpc\": \"2.0\",\n   \"id\": 2, \"result\": {\"tools\": []}}\n]")},
			exchanges: []exchange{{send: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, want: []string{
				progress, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`}}},
			wantLog: []string{"POST tools/list session=s-1 version=2025-11-25", "DELETE session=s-1"},
		},
		{
			name: "an error status with a text body answers the request with an error naming it",
			post: map[string]http.HandlerFunc{"ping": func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "upstream <b>exploded</b>\nTraceback: "+strings.Repeat("x", 300), http.StatusInternalServerError)
			}},
			exchanges: []exchange{{send: `{"jsonrpc":"2.0","id":"p","method":"ping"}`, want: []string{
				`{"jsonrpc":"2.0","id":"p","error":{"code":-32603,"message":"HTTP 500 Internal Server Error: upstream <b>exploded</b> Traceback: ` + strings.Repeat("x", 200-len("upstream <b>exploded</b>\nTraceback: ")) + `"}}`}}},
			wantLog: []string{"POST ping session=s-1 version=2025-11-25", "DELETE session=s-1"},
		},
		{
			name: "an error status with a JSON-RPC error body is the server's answer",
			post: map[string]http.HandlerFunc{"ping": reply(http.StatusBadRequest, "application/json", `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}`)},
			exchanges: []exchange{{send: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, want: []string{
				`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}`}}},
			wantLog: []string{"POST ping session=s-1 version=2025-11-25", "DELETE session=s-1"},
		},
		{
			name: "an error with a null id is passed on, and the request still gets its own",
			post: map[string]http.HandlerFunc{"ping": reply(http.StatusNotFound, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)},
			exchanges: []exchange{{send: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, want: []string{
				`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`,
				`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"HTTP 404 Not Found: {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32001,\"message\":\"Session not found\"}}"}}`}}},
			wantLog: []string{"POST ping session=s-1 version=2025-11-25", "DELETE session=s-1"},
		},
		{
			name: "a 2xx body that is not JSON answers the request with an error",
			post: map[string]http.HandlerFunc{"ping": reply(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":2,"res`)},
			exchanges: []exchange{{send: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, want: []string{
				`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"HTTP 200 OK: the body is not JSON: {\"jsonrpc\":\"2.0\",\"id\":2,\"res"}}`}}},
			wantLog: []string{"POST ping session=s-1 version=2025-11-25", "DELETE session=s-1"},
		},
		{
			name: "a connection that breaks answers the request with an error",
			post: map[string]http.HandlerFunc{"ping": func(w http.ResponseWriter, r *http.Request) {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
			}},
			exchanges: []exchange{{send: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, want: []string{
				`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"HTTP request failed: Post \"SERVER/mcp\": EOF"}}`}}},
			wantLog: []string{"POST ping session=s-1 version=2025-11-25", "DELETE session=s-1"},
		},
		{
			name: "an event stream cut before the answer is resumed from its last event id, and the answer comes once",
			post: map[string]http.HandlerFunc{"tools/call": events("retry: 10\nid: 1\ndata: " + progress + "\n\n")},
			get: func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Last-Event-ID") != "1" {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				events("id: 2\ndata: "+callResult+"\n\n")(w, r)
			},
			exchanges: []exchange{{send: callRequest, want: []string{progress, callResult}}},
			wantLog: []string{"POST tools/call session=s-1 version=2025-11-25",
				"GET session=s-1 version=2025-11-25 last-event-id=1", "DELETE session=s-1"},
		},
		{
			name: "a priming event is something to resume from",
			post: map[string]http.HandlerFunc{"tools/call": events("id: p-0\nretry: 10\ndata:\n\n")},
			get: func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Last-Event-ID") != "p-0" {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				events("id: p-1\ndata: "+callResult+"\n\n")(w, r)
			},
			exchanges: []exchange{{send: callRequest, want: []string{callResult}}},
			wantLog: []string{"POST tools/call session=s-1 version=2025-11-25",
				"GET session=s-1 version=2025-11-25 last-event-id=p-0", "DELETE session=s-1"},
		},
		{
			name: "a resumption refused gives the request up",
			post: map[string]http.HandlerFunc{"tools/call": events("retry: 10\nid: 1\ndata: " + progress + "\n\n")},
			exchanges: []exchange{{send: callRequest, want: []string{progress},
				await: "GET session=s-1 version=2025-11-25 last-event-id=1"}},
			wantLog: []string{"POST tools/call session=s-1 version=2025-11-25",
				"GET session=s-1 version=2025-11-25 last-event-id=1", "DELETE session=s-1"},
		},
		{
			name:      "a stream cut with no event id is not resumed",
			post:      map[string]http.HandlerFunc{"tools/call": events("data: " + progress + "\n\n")},
			exchanges: []exchange{{send: callRequest, want: []string{progress}}},
			wantLog:   []string{"POST tools/call session=s-1 version=2025-11-25", "DELETE session=s-1"},
		},
		{
			name: "events that carry no message, or no JSON, and an unfinished one are skipped",
			post: map[string]http.HandlerFunc{"tools/call": events(": hello\n\nevent: other\ndata: {}\n\ndata: not json\n\n" +
				"data: {\"jsonrpc\":\ndata: \"2.0\",\"method\":\"notifications/message\"}\n\n" +
				"data: " + callResult + "\n\ndata: " + progress)},
			exchanges: []exchange{{send: callRequest, want: []string{`{"jsonrpc":"2.0","method":"notifications/message"}`, callResult}}},
			wantLog:   []string{"POST tools/call session=s-1 version=2025-11-25", "DELETE session=s-1"},
		},
		{
			name: "the GET stream delivers the server's messages and is reopened from its last event id",
			get: func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Last-Event-ID") == "" {
					events("retry: 10\nid: 5\ndata: "+progress+"\n\n")(w, r)
					return
				}
				w.WriteHeader(http.StatusMethodNotAllowed)
			},
			exchanges: []exchange{{want: []string{progress}, await: "GET session=s-1 version=2025-11-25 last-event-id=5"}},
			wantLog:   []string{"GET session=s-1 version=2025-11-25 last-event-id=5", "DELETE session=s-1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scripted{post: tc.post, get: tc.get}
			if s.post == nil {
				s.post = map[string]http.HandlerFunc{}
			}
			s.post["initialize"] = initialize
			srv := httptest.NewServer(s)
			defer srv.Close()
			p := dial(t, srv.URL+"/mcp", http.Header{"Authorization": {"Bearer t"}})
			defer p.Reader().Close()
			lines := readLines(p.Reader())
			w := p.Writer()
			for _, x := range append(slices.Clone(handshake), tc.exchanges...) {
				if x.send != "" {
					if _, err := io.WriteString(w, x.send+"\n"); err != nil {
						t.Fatal(err)
					}
				}
				got := lines.next(t, len(x.want))
				for i := range got {
					got[i] = strings.ReplaceAll(got[i], srv.URL, "SERVER")
				}
				if diff := cmp.Diff(x.want, got); diff != "" {
					t.Errorf("after %s (-want +got):\n%s", x.send, diff)
				}
				if x.await != "" {
					s.await(t, x.await)
				}
			}
			w.Close()
			if rest := lines.rest(t); len(rest) > 0 {
				t.Errorf("after the last exchange: %q", rest)
			}
			p.Reader().Close()
			want := append(slices.Clone(handshakeLog), tc.wantLog...)
			slices.Sort(want)
			if diff := cmp.Diff(want, s.sortedLog()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
