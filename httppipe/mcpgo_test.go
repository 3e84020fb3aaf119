package httppipe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpchaos/mcpchaos/chaos/probe"
	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/internal/leakcheck"
)

// The probe client, which speaks newline-delimited JSON-RPC as over stdio,
// drives mcp-go's streamable HTTP server (in both eras) and its legacy
// HTTP+SSE server (named by its /sse URL, or found by the refusal of the
// initialize POST) through a Pipe unchanged: it initializes, lists the
// tools, and has every request answered, the server-to-client requests of
// the tools that make them included. Once probe.Run returns, which closes
// both ends, nothing the Pipe started is left running.
func TestProbeAgainstMcpGo(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(everything.New()))
	front := httptest.NewServer(mux)
	defer front.Close()
	sse := server.NewSSEServer(everything.New(), server.WithBaseURL(front.URL))
	defer sse.Shutdown(context.Background())
	mux.Handle("/sse", sse.SSEHandler())
	mux.Handle("/events", sse.SSEHandler()) // a legacy stream not named /sse
	mux.Handle("/message", sse.MessageHandler())

	type result struct {
		Era         string
		Initialized bool
		Tools       int
		Unanswered  []string
	}
	for _, tc := range []struct {
		name, path, era string
		want            result
	}{
		{"streamable HTTP, stateless", "/mcp", "", result{Era: probe.EraStateless, Initialized: true}},
		{"streamable HTTP, initialize handshake", "/mcp", probe.EraStateful, result{Era: probe.EraStateful, Initialized: true}},
		// mcp-go serves the stateless revision over its legacy transport too.
		{"legacy HTTP+SSE at /sse", "/sse", "", result{Era: probe.EraStateless, Initialized: true}},
		{"legacy HTTP+SSE at /sse, initialize handshake", "/sse", probe.EraStateful, result{Era: probe.EraStateful, Initialized: true}},
		{"legacy HTTP+SSE found by the refused initialize", "/events", probe.EraStateful, result{Era: probe.EraStateful, Initialized: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := dial(t, front.URL+tc.path, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := probe.Run(ctx, probe.Config{Era: tc.era, Deadline: 5 * time.Second}, p.Reader(), p.Writer())
			if err != nil {
				t.Fatalf("probe: %v", err)
			}
			got := result{Era: out.Era, Initialized: out.Initialized, Tools: len(out.Tools)}
			for _, r := range out.Requests {
				if !r.Answered || r.Error != "" {
					got.Unanswered = append(got.Unanswered, r.Method+" "+r.Tool+": "+r.Error)
				}
			}
			tc.want.Tools = 8 // everything's tools
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if leaks := leakcheck.Lingering(5*time.Second, "mcpchaos/httppipe."); leaks != "" {
				t.Errorf("goroutines of the pipe left behind:\n%s", leaks)
			}
		})
	}
}
