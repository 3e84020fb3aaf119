package ssetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Stream serves a legacy HTTP+SSE stream: an endpoint event naming
// endpoint, then each of msgs as a message event, until the client hangs
// up or msgs is closed (the server ends the stream), when hungUp (if not
// nil) is called.
func Stream(endpoint string, msgs <-chan string, hungUp func()) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if hungUp != nil {
			defer hungUp()
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: endpoint\ndata: "+endpoint+"\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case m, ok := <-msgs:
				if !ok {
					return
				}
				_, _ = io.WriteString(w, "event: message\ndata: "+m+"\n\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}
}

// EchoingServer is a legacy HTTP+SSE server (GET /sse, POST /message) that
// answers every request with an empty result on its stream, and also in
// the body of the POST that carried it (202, application/json), as mcp-go
// 0.20's server did. The stream ends with the request that opened it.
func EchoingServer() http.Handler {
	answers := make(chan string, 16)
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", Stream("/message?sessionId=1", answers, nil))
	mux.HandleFunc("/message", func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		select {
		case answers <- answer:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, answer)
	})
	return mux
}
