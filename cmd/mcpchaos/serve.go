package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/examples/everything"
	"github.com/mcpchaos/mcpchaos/faults"
)

// runServe serves the bundled example MCP server on stdin and stdout, or
// over HTTP with --http; it is the default target of mcpchaos test.
func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("http", "", "serve over HTTP on `ADDR` (host:port) instead of stdio: streamable HTTP at /mcp, the legacy HTTP+SSE transport at /sse")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos serve [--http ADDR]\n\nServes the bundled example MCP server (echo, slow with progress, list_changed,\nroots, sample, elicit, ping_client, big) over stdio, or HTTP, in both protocol eras.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "serve: %v (see mcpchaos serve --help)", err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "serve: unexpected argument %q", fs.Arg(0))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *addr != "" {
		return serveHTTP(ctx, *addr, stdout, stderr)
	}
	if err := everything.ServeStdio(ctx, stdin, stdout); err != nil && !errors.Is(err, context.Canceled) {
		return usageError(stderr, "serve: %v", err)
	}
	if ctx.Err() != nil {
		// mcp-go leaves a reader blocked on stdin after a signal; exit now.
		os.Exit(exitOK)
	}
	return exitOK
}

// localOrigins refuses, with 403, a request whose Origin is not a page of
// this machine: mcp-go checks Host, and the specification's MUST is the
// Origin check (MCP 2025-11-25, Transports › Security Warning), without
// which a page of any site reaches the server through DNS rebinding under
// a Host it accepts. A request without Origin (not from a browser) passes.
func localOrigins(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !localOrigin(origin) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Forbidden: the request's Origin is not a page of this machine"}}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// localOrigin reports whether origin is a page served from this machine.
func localOrigin(origin string) bool {
	u, err := url.Parse(origin)
	// "null" has no host: a sandboxed frame or a file.
	return err == nil && u.Host != "" && faults.Loopback(u)
}

// serveHTTP serves the example on mcp-go's streamable HTTP and SSE
// transports until ctx ends (SIGTERM), then shuts down within 1s: within
// the 2s mcpchaos itself gives a server it stops, whatever its clients
// left open.
func serveHTTP(ctx context.Context, addr string, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError(stderr, "serve: cannot listen on %s: %v", addr, err)
	}
	mux := http.NewServeMux()
	// Stateful: a session ended by DELETE is answered 404 from then on, as
	// the specification asks; mcp-go's default forgets nothing it ended.
	mux.Handle("/mcp", localOrigins(server.NewStreamableHTTPServer(everything.New(), server.WithStateful(true))))
	base := "http://" + ln.Addr().String()
	sse := server.NewSSEServer(everything.New(), server.WithBaseURL(base))
	mux.Handle("/sse", sse.SSEHandler())
	mux.Handle("/message", sse.MessageHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "mcpchaos serve: listening on %s/mcp (streamable HTTP) and %s/sse (HTTP+SSE)\n", base, base)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return usageError(stderr, "serve: %v", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = sse.Shutdown(shutdown)
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	return exitOK
}
