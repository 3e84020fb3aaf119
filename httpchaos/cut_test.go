package httpchaos_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/internal/ssetest"
	"github.com/mcpchaos/mcpchaos/judge"
	"github.com/mcpchaos/mcpchaos/wire"
)

// scripted is a streamable HTTP server small enough to read at a glance,
// which says when a client left each of its streams: initialize is
// answered with a JSON body and a session id; a tools/call with an event
// stream that sends a priming event and waits for release before the
// answer; a notification with 202; a GET with an event stream that sends
// what notes carries.
type scripted struct {
	release chan struct{}
	notes   chan string
	// left gets "POST" or "GET" when a client leaves that stream before
	// the server ended it.
	left chan string
}

func newScripted() *scripted {
	return &scripted{release: make(chan struct{}), notes: make(chan string, 8), left: make(chan string, 8)}
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "s1")
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case n := <-s.notes:
				_, _ = io.WriteString(w, "data: "+n+"\n\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				s.left <- "GET"
				return
			}
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&m)
	switch {
	case len(m.ID) == 0:
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "initialize":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"scripted","version":"0"}}}`)
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "id: "+string(m.ID)+"-0\ndata: \n\n")
		w.(http.Flusher).Flush()
		select {
		case <-s.release:
		case <-r.Context().Done():
			s.left <- "POST"
			return
		}
		_, _ = io.WriteString(w, "id: "+string(m.ID)+"-1\ndata: "+`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[]}}`+"\n\n")
	}
}

// session is a client of a scripted server through the proxy, speaking
// raw HTTP so that a test sees exactly what reaches it.
type session struct {
	t     *testing.T
	front string
	rec   *chaos.MemoryRecorder
	ctx   context.Context
}

func scriptedSession(t *testing.T, srv http.Handler, specs ...string) *session {
	t.Helper()
	front, _, rec := proxyTo(t, srv, "/mcp", specs...)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	s := &session{t: t, front: front, rec: rec, ctx: ctx}
	s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`).Body.Close()
	s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	return s
}

func (s *session) post(body string) *http.Response {
	s.t.Helper()
	resp, err := s.try(body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// try POSTs body, which may fail (a fault cut it).
func (s *session) try(body string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(s.ctx, http.MethodPost, s.front, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "s1")
	return http.DefaultClient.Do(req)
}

// get opens the GET stream, and returns its events' data lines as they
// come, and the error that ended it.
func (s *session) get() (lines <-chan string, ended <-chan error) {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(s.ctx, http.MethodGet, s.front, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", "s1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	out, end := make(chan string, 16), make(chan error, 1)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- d
			}
		}
		end <- sc.Err()
	}()
	return out, end
}

// waitHTTP waits for an http event of the session whose detail holds part.
func (s *session) waitHTTP(part string) wire.Event {
	s.t.Helper()
	for deadline := time.Now().Add(testTimeout); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, e := range s.rec.Events() {
			if (e.Type == wire.EventHTTP || e.Type == wire.EventFault) && strings.Contains(e.Detail, part) {
				return e
			}
		}
	}
	s.t.Fatalf("no event says %q", part)
	return wire.Event{}
}

// within waits at most d for a value on c; ok is false when none came.
func within[T any](c <-chan T, d time.Duration) (v T, ok bool) {
	select {
	case v = <-c:
		return v, true
	case <-time.After(d):
		return v, false
	}
}

// waitFor waits for an event of the session that ok accepts.
func (s *session) waitFor(what string, ok func(wire.Event) bool) wire.Event {
	s.t.Helper()
	for deadline := time.Now().Add(testTimeout); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, e := range s.rec.Events() {
			if ok(e) {
				return e
			}
		}
	}
	s.t.Fatalf("no event: %s", what)
	return wire.Event{}
}

// verdict judges the session so far (the proxy is still open: the
// verdict's notes and findings, not its completeness, are what is read).
func (s *session) verdict() judge.Verdict { return judge.Session(s.rec.Events()) }

// A cut of a POST's stream ends the server's side too, by default: the
// server sees its client leave, and the call it was answering is noted as
// the cut's doing. With server=read, the server's side stays open, and
// the answer it then sends is read into the record. Neither is held
// against the server.
func TestCutEndsTheServersSide(t *testing.T) {
	for _, tc := range []struct {
		spec string
		keep bool // the server's side stays open
	}{
		{"eof:on=c2s:request:tools/call", false},
		{"reset:on=c2s:request:tools/call,position=after", false},
		{"eof:on=c2s:request:tools/call,server=read", true},
		{"reset:on=c2s:request:tools/call,position=after,server=read", true},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			srv := newScripted()
			s := scriptedSession(t, srv, tc.spec)
			if resp, err := s.try(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`); err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil {
					t.Fatal("the call's stream ended whole; want it cut")
				}
			}
			left, gone := within(srv.left, time.Second)
			if gone == tc.keep {
				t.Fatalf("the server saw its client leave: %v (%s); want %v", gone, left, !tc.keep)
			}
			cut := s.waitFor("the cut", func(e wire.Event) bool { return e.Type == wire.EventHTTP && e.Cut != "" })
			want := wire.CutBoth
			if tc.keep {
				want = wire.CutClient
				close(srv.release)
				s.waitFor("the answer, read into the record", func(e wire.Event) bool {
					return e.Type == wire.EventDropped && e.Dir == "s2c" && strings.Contains(e.Detail, "by fault")
				})
			}
			if cut.Cut != want {
				t.Errorf("the cut is recorded as %q; want %q (%s)", cut.Cut, want, cut.Detail)
			}
			v := s.verdict()
			if len(v.Findings) != 0 {
				t.Errorf("findings: %+v", v.Findings)
			}
			noted := strings.Contains(strings.Join(v.Notes, "\n"), "at both ends")
			if noted == tc.keep {
				t.Errorf("notes %q: the call's loss noted as the cut's doing: %v; want %v", v.Notes, noted, !tc.keep)
			}
		})
	}
}

// eof and reset with stream=get cut the client's GET stream when a call
// goes, not the call's exchange: the client's stream ends (a reset as
// ECONNRESET), the call is answered, and by default the server sees its
// GET stream's client leave. With server=read the server's side stays
// open, and what the server sends on it is read into the record.
func TestCutTheGETStream(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		keep  bool
		reset bool
	}{
		{"eof:on=c2s:request:tools/call,stream=get", false, false},
		{"reset:on=c2s:request:tools/call,stream=get", false, true},
		{"eof:on=c2s:request:tools/call,stream=get,server=read", true, false},
		{"reset:on=c2s:request:tools/call,stream=get,server=read", true, true},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			srv := newScripted()
			close(srv.release)
			s := scriptedSession(t, srv, tc.spec)
			lines, ended := s.get()
			srv.notes <- `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"before"}}`
			if _, ok := within(lines, time.Second); !ok {
				t.Fatal("the GET stream carried nothing before the cut")
			}
			resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), `"id":1,"result"`) {
				t.Errorf("the call's own exchange was not left alone: %q", body)
			}
			err, ok := within(ended, time.Second)
			switch {
			case !ok:
				t.Fatal("the client's GET stream did not end")
			case tc.reset && !errors.Is(err, syscall.ECONNRESET):
				t.Errorf("the GET stream ended with %v; want a reset", err)
			case !tc.reset && err == nil:
				t.Error("the GET stream ended as a whole stream does; want it cut")
			}
			left, gone := within(srv.left, time.Second)
			if gone == tc.keep || gone && left != "GET" {
				t.Fatalf("the server saw a client leave: %v (%s); want its GET stream's: %v", gone, left, !tc.keep)
			}
			if tc.keep {
				srv.notes <- `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after"}}`
				s.waitFor("the server's notification after the cut, read into the record", func(e wire.Event) bool {
					return e.Type == wire.EventDropped && strings.Contains(e.Detail, "the client's stream was")
				})
			}
			if v := s.verdict(); len(v.Findings) != 0 {
				t.Errorf("findings: %+v", v.Findings)
			}
		})
	}
}

// stall with stream=get holds the GET stream alone: the server's own
// messages wait while the answer to a call flows.
func TestStallTheGETStream(t *testing.T) {
	srv := newScripted()
	close(srv.release)
	s := scriptedSession(t, srv, "stall:on=c2s:request:tools/call,stream=get,for=600ms")
	lines, _ := s.get()
	start := time.Now()
	resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
	srv.notes <- `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"held"}}`
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Errorf("the call's answer took %v: the stall held more than the GET stream", d)
	}
	if _, ok := within(lines, 2*time.Second); !ok {
		t.Fatal("the held notification never came")
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("the GET stream's notification came after %v; want it held 600ms", d)
	}
}

// Injections with stream=get go into the GET stream, not into the stream
// of the call that triggered them; with no GET stream open, the fault is
// skipped, and says why.
func TestInjectIntoTheGETStream(t *testing.T) {
	t.Run("open", func(t *testing.T) {
		srv := newScripted()
		close(srv.release)
		s := scriptedSession(t, srv, "list-changed:on=c2s:request:tools/call,stream=get")
		lines, _ := s.get()
		resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "list_changed") {
			t.Errorf("the notification went into the call's stream: %q", body)
		}
		got, ok := within(lines, time.Second)
		if !ok || !strings.Contains(got, "notifications/tools/list_changed") {
			t.Errorf("the GET stream carried %q; want the list_changed notification", got)
		}
	})
	t.Run("none open", func(t *testing.T) {
		srv := newScripted()
		close(srv.release)
		s := scriptedSession(t, srv, "list-changed:on=c2s:request:tools/call,stream=get")
		resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "list_changed") {
			t.Errorf("the notification went into the call's stream: %q", body)
		}
		f := s.waitHTTP("no GET stream is open toward the client")
		if f.Type != wire.EventFault || !strings.HasPrefix(f.Detail, "skipped: ") {
			t.Errorf("the fault's record: %+v; want it skipped", f)
		}
	})
}

// The legacy transport's one stream, cut at both ends: the server sees its
// client leave. A request the client then POSTs to the session is
// answered by the server with 202 and never answered on a stream (there is
// none): the judge holds it lost. One refused with an error status is not.
func TestCutTheLegacyStream(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refuse  bool
		finding string
	}{
		{"a server that accepts the session's POSTs", false, "accepted-without-stream"},
		{"a server that refuses them", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := make(chan string, 4)
			var hungUp sync.Once
			left := make(chan struct{})
			mux := http.NewServeMux()
			mux.HandleFunc("/sse", ssetest.Stream("/message?sessionId=1", msgs, func() { hungUp.Do(func() { close(left) }) }))
			mux.HandleFunc("/message", func(w http.ResponseWriter, r *http.Request) {
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				_ = json.NewDecoder(r.Body).Decode(&m)
				select {
				case <-left:
					if tc.refuse {
						http.Error(w, "Could not find session", http.StatusNotFound)
						return
					}
				default:
					if len(m.ID) > 0 {
						msgs <- `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`
					}
				}
				w.WriteHeader(http.StatusAccepted)
			})
			front, p, rec := proxyTo(t, mux, "/sse", "eof:on=s2c:response,nth=1")
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, front, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			endpoint := strings.TrimSuffix(front, "/sse") + "/message?sessionId=1"
			postTo := func(body string) int {
				r, err := http.Post(endpoint, "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				r.Body.Close()
				return r.StatusCode
			}
			postTo(`{"jsonrpc":"2.0","id":1,"method":"ping"}`) // its answer is cut
			if _, ok := within((<-chan struct{})(left), time.Second); !ok {
				t.Fatal("the server never saw its stream's client leave")
			}
			time.Sleep(150 * time.Millisecond) // past the race window
			status := postTo(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			if want := map[bool]int{true: 404, false: 202}[tc.refuse]; status != want {
				t.Fatalf("the POST after the cut got %d; want %d", status, want)
			}
			p.Close("the test ended")
			v := judge.Session(rec.Events())
			var got []string
			for _, f := range v.Findings {
				got = append(got, f.Rule)
			}
			if tc.finding == "" && len(got) != 0 || tc.finding != "" && (len(got) != 1 || got[0] != tc.finding) {
				t.Errorf("findings %v; want %q\n%+v", got, tc.finding, v.Findings)
			}
		})
	}
}
