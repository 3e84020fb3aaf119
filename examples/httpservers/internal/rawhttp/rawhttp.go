// Package rawhttp is what the planted-bug streamable HTTP servers share:
// reading a POSTed message, the answers every example gives alike
// (initialize, ping, tools/list, errors), the two tools (echo and slow),
// the events of an answer streamed as SSE and serving until SIGTERM. It
// has no bug of its own; each example plants one in how it keeps its
// sessions and calls.
package rawhttp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Message is a JSON-RPC message as the examples read it.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		RequestID json.RawMessage `json:"requestId"`
		Level     string          `json:"level"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

// Read reads the POSTed message; when it is not one, it answers the parse
// error itself and returns false.
func Read(w http.ResponseWriter, r *http.Request) (Message, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var m Message
	if err != nil || json.Unmarshal(body, &m) != nil {
		WriteError(w, http.StatusBadRequest, "null", -32700, "Parse error")
		return m, false
	}
	return m, true
}

// Initialize answers initialize, opening session sid (see NewSessionID):
// the caller registers the session before, so that the client's next
// request finds it.
func Initialize(w http.ResponseWriter, id json.RawMessage, sid, name string) {
	w.Header().Set("Mcp-Session-Id", sid)
	WriteJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":%q,"version":"1.0.0"}}}`, id, name))
}

// InitializeWith answers initialize as Initialize does, but declares
// capabilities (a JSON object) rather than tools alone: a server that sends
// notifications/message declares logging.
func InitializeWith(w http.ResponseWriter, id json.RawMessage, sid, name, capabilities string) {
	w.Header().Set("Mcp-Session-Id", sid)
	WriteJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":%s,"serverInfo":{"name":%q,"version":"1.0.0"}}}`, id, capabilities, name))
}

// Answer answers the requests every example answers alike (ping,
// tools/list, an unknown method); tools/call is the example's own.
func Answer(w http.ResponseWriter, id, method string) {
	switch method {
	case "ping":
		WriteJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id))
	case "tools/list":
		WriteJSON(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","description":"Answers its text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},{"name":"slow","description":"Answers after ms milliseconds.","inputSchema":{"type":"object","properties":{"ms":{"type":"integer"}}}}]}}`, id))
	default:
		WriteError(w, http.StatusOK, id, -32601, "Method not found")
	}
}

// Endpoint is the MCP endpoint of an example with no GET stream: POSTs go
// to post, DELETEs (a session's end) to end, and anything else is answered
// 405, as the specification lets a server answer a GET it does not offer.
func Endpoint(post, end http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			post(w, r)
		case http.MethodDelete:
			end(w, r)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}
}

// SessionNotFound is the 404 for a session the server does not know.
func SessionNotFound(w http.ResponseWriter) {
	WriteError(w, http.StatusNotFound, "null", -32001, "Session not found")
}

// Tool says what a call of tool name with args answers, and how long it
// takes: slow takes its ms (300 by default), echo takes echoTakes, as a
// call that does I/O does, so that calls overlap as in a real session.
// Arguments the tool's schema refuses (text not a string, ms not an
// integer) fail the call (failed, and text says why): each example has
// one planted bug, and input left unvalidated is not it.
func Tool(name string, args json.RawMessage, echoTakes time.Duration) (text string, failed bool, takes time.Duration) {
	var a struct {
		Text string `json:"text"`
		MS   int    `json:"ms"`
	}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &a); err != nil {
			return "invalid arguments: " + err.Error(), true, 0
		}
	}
	if name != "slow" {
		return a.Text, false, echoTakes
	}
	takes = 300 * time.Millisecond
	if a.MS > 0 {
		takes = time.Duration(a.MS) * time.Millisecond
	}
	return "done", false, takes
}

// Result is the answer to call id whose tool answered text; failed makes
// it a tool error (isError).
func Result(id, text string, failed bool) string {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if failed {
		r["isError"] = true
	}
	res, _ := json.Marshal(r)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res)
}

// WriteJSON writes a JSON body.
func WriteJSON(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

// StartEvents answers a POST with an SSE stream, its head sent at once:
// the messages of the request go down it as events (WriteEvent), the
// notifications before the response.
func StartEvents(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// WriteEvent writes one JSON-RPC message as an SSE event on a stream
// StartEvents began, and flushes it so that the client has it now rather
// than when the stream ends.
func WriteEvent(w http.ResponseWriter, msg string) error {
	if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg); err != nil {
		return err
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// WriteError writes a JSON-RPC error with the given HTTP status.
func WriteError(w http.ResponseWriter, status int, id string, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, msg)
}

// NewSessionID is a fresh, unguessable session id.
func NewSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// LocalOnly refuses what a page of a foreign site sends a local server
// through DNS rebinding: a Host that does not name this machine (421), an
// Origin that is not a page of it (403), as the specification asks (MCP
// 2025-11-25, Transports › Security Warning). The planted bugs are
// elsewhere.
func LocalOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !localHost(r.Host) {
			WriteError(w, http.StatusMisdirectedRequest, "null", -32000, "Misdirected: the Host does not name this machine")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host == "" || !localHost(u.Host) {
				WriteError(w, http.StatusForbidden, "null", -32000, "Forbidden: the Origin is not a page of this machine")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// localHost reports whether host (host or host:port) names this machine.
func localHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// Serve serves h at /mcp on addr until SIGTERM or SIGINT, then shuts down
// within 2s; it exits 1 when it cannot listen.
func Serve(name string, fixed bool, addr string, h http.Handler) {
	ServeWithStop(name, fixed, addr, h, nil)
}

// ServeWithStop serves as Serve does, and on SIGTERM or SIGINT runs
// beforeStop (when set) before the HTTP server shuts down: a server's own
// clean-up of what it holds in flight.
func ServeWithStop(name string, fixed bool, addr string, h http.Handler, beforeStop func()) {
	mux := http.NewServeMux()
	mux.Handle("/mcp", LocalOnly(h))
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		if beforeStop != nil {
			beforeStop()
		}
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("%s (fixed=%v) on http://%s/mcp", name, fixed, addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Print(err)
		os.Exit(1)
	}
}
