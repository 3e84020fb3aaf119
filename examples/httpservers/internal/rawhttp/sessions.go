package rawhttp

import (
	"encoding/json"
	"net/http"
	"sync"
)

// Sessions is a table of open sessions, for the examples whose bug lies
// elsewhere than in how they keep their sessions: Open answers initialize
// with a new session, Find names the session of a request (answering 404
// itself for one it does not know), End answers DELETE.
type Sessions struct {
	mu   sync.Mutex
	open map[string]bool
}

// Open answers initialize (request id) with a new session of server name,
// declaring capabilities, and returns its id.
func (s *Sessions) Open(w http.ResponseWriter, id json.RawMessage, name, capabilities string) string {
	sid := NewSessionID()
	s.mu.Lock()
	if s.open == nil {
		s.open = map[string]bool{}
	}
	s.open[sid] = true
	s.mu.Unlock()
	InitializeWith(w, id, sid, name, capabilities)
	return sid
}

// Find returns the session r was sent in; for one the table does not
// hold, it answers 404 and returns false.
func (s *Sessions) Find(w http.ResponseWriter, r *http.Request) (string, bool) {
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	known := s.open[sid]
	s.mu.Unlock()
	if !known {
		SessionNotFound(w)
	}
	return sid, known
}

// End answers DELETE: the session is gone from the table (404 for one it
// did not hold).
func (s *Sessions) End(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	known := s.open[sid]
	delete(s.open, sid)
	s.mu.Unlock()
	if !known {
		SessionNotFound(w)
		return
	}
	w.WriteHeader(http.StatusOK)
}
