package suite

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/faults"
)

// An HTTP server that wants credentials refuses the handshake with 401:
// the set-up error says to send them with --header, or, when some were
// sent, that they were refused. notion-mcp-server 2.5.2 over HTTP answers
// 401 "Missing bearer token"; the error used to end at the status, and
// said nothing of --header.
func TestSetupErrorOfAServerThatWantsCredentials(t *testing.T) {
	// The body's error has id null (notion-mcp-server), or names the
	// refused request, which the client then reads as its answer: the
	// status says it wants credentials either way.
	for _, body := range []struct{ name, id string }{{"id null", ""}, {"the request's id", "request"}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			id := "null"
			if body.id != "" && len(req.ID) > 0 {
				id = string(req.ID)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Unauthorized: Missing bearer token"},"id":`+id+`}`)
		}))
		defer srv.Close()
		u, _ := url.Parse(srv.URL + "/mcp")
		for _, tc := range []struct {
			name   string
			header http.Header
			want   string
		}{
			{"none sent", nil, "it refused the handshake with HTTP 401 Unauthorized: it wants credentials; send them with --header, as in --header 'Authorization: Bearer TOKEN'"},
			{"refused", http.Header{"Authorization": {"Bearer wrong"}}, "it refused the handshake with HTTP 401 Unauthorized: the credentials sent with --header were not accepted"},
		} {
			t.Run(body.name+"/"+tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_, err := Run(ctx, Options{URL: u, Header: tc.header, Scenarios: []faults.Scenario{}, Seed: 1,
					Deadline: 2 * time.Second, Grace: 500 * time.Millisecond})
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v\nwant one saying %q", err, tc.want)
				}
			})
		}
	}
}
