package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

const (
	clientName    = "mcpchaos-client"
	clientVersion = "0.1.0"
)

// runSession runs one MCP session against cfg.command. Every wait in it is
// bounded by cfg.timeout.
func runSession(cfg config, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()

	out := newPrinter(stdout)
	// Lines from the transport's reader after the session has ended would
	// land after the error message, or after exit; drop them.
	defer out.close()

	var tr transport.Interface
	if cfg.url != "" {
		hopts := []transport.StreamableHTTPCOption{transport.WithHTTPTimeout(cfg.timeout),
			transport.WithHTTPLogger(slog.New(slog.DiscardHandler))}
		if cfg.listen {
			hopts = append(hopts, transport.WithContinuousListening())
		}
		h, err := transport.NewStreamableHTTP(cfg.url, hopts...)
		if err != nil {
			return fmt.Errorf("--url %s: %v", cfg.url, err)
		}
		tr = h
	} else {
		tr = transport.NewStdioWithOptions(cfg.command[0], nil, cfg.command[1:],
			transport.WithCommandStderrWriter(stderr),
			// Transport errors come back from the calls; don't log them twice.
			transport.WithCommandLogger(slog.New(slog.DiscardHandler)),
		)
	}
	opts := []client.ClientOption{client.WithRootsHandler(roots{out: out})}
	if cfg.protocol != "" {
		opts = append(opts, client.WithProtocolVersion(cfg.protocol))
	}
	c := client.NewClient(tr, opts...)
	c.OnNotification(out.notification)

	// The transport runs the command with this context, so the server is
	// killed if the session outlives its deadline.
	if err := c.Start(ctx); err != nil {
		if cfg.url != "" {
			return fmt.Errorf("connecting to %s failed: %v", cfg.url, err)
		}
		return fmt.Errorf("starting the server failed: %v; check the server command %q", err, strings.Join(cfg.command, " "))
	}
	err := converse(ctx, c, cfg, out)
	// Close even after a failure: it closes the server's stdin, then waits for
	// the server to exit, escalating to SIGTERM and SIGKILL.
	closeErr := c.Close()
	if err != nil {
		return err
	}
	if closeErr != nil && !killedAtClose(closeErr) {
		return failure(ctx, cfg, "waiting for the server to exit", closeErr)
	}
	return nil
}

// killedAtClose reports whether Close had to signal a server that did not
// exit when its stdin closed. The session's work is done by then, and the
// escalation is the client doing its job, not failing it.
func killedAtClose(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

func converse(ctx context.Context, c *client.Client, cfg config, out *printer) error {
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: clientName, Version: clientVersion}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		return failure(ctx, cfg, "initializing", err)
	}
	out.line("server %s %s protocol %s", res.ServerInfo.Name, res.ServerInfo.Version, c.ProtocolVersion())

	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return failure(ctx, cfg, "listing tools", err)
	}
	names := make([]string, 0, len(tools.Tools))
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	out.line("tools %s", strings.Join(names, " "))

	for i, call := range cfg.calls {
		req := mcp.CallToolRequest{}
		req.Params.Name = call.name
		req.Params.Arguments = call.args
		req.Params.Meta = &mcp.Meta{ProgressToken: fmt.Sprintf("call-%d", i+1)}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return failure(ctx, cfg, "calling "+call.name, err)
		}
		out.result(call.name, res)
	}

	if err := settle(ctx, cfg.settle, out.seen); err != nil {
		return failure(ctx, cfg, "waiting for notifications to stop", err)
	}
	return nil
}

// settle waits until no notification has arrived for quiet. Servers may
// write a notification sent mid-call after the call's response (mcp-go does:
// notifications go through a separate queue), so closing right after the last
// result could miss it.
func settle(ctx context.Context, quiet time.Duration, seen <-chan struct{}) error {
	if quiet == 0 {
		return nil
	}
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		select {
		case <-seen:
			timer.Reset(quiet)
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// failure describes a failed step and what to do about it.
func failure(ctx context.Context, cfg config, step string, err error) error {
	var broken *transport.Error
	switch {
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("timed out after %v while %s (%v); raise --timeout or check that the server answers", cfg.timeout, step, err)
	case errors.As(err, &broken):
		return fmt.Errorf("%s failed: %v; check the server command %q and its stderr", step, err, strings.Join(cfg.command, " "))
	default:
		// The server answered, with a JSON-RPC error.
		return fmt.Errorf("%s failed: the server answered %v; check the tool name and arguments", step, err)
	}
}

// roots answers the server's roots requests with the current directory.
type roots struct{ out *printer }

func (r roots) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	r.out.line("roots answered with 1 root")
	return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: fileURI(dir), Name: filepath.Base(dir)}}}, nil
}

func fileURI(dir string) string {
	path := filepath.ToSlash(dir)
	if !strings.HasPrefix(path, "/") {
		path = "/" + path // a Windows drive letter
	}
	return (&url.URL{Scheme: "file", Path: path}).String()
}
