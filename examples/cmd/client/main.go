// Command client is a small, well-behaved MCP client to drive a server through
// mcpchaos. It starts the server command over stdio, negotiates, lists the
// tools, makes some calls, prints what it saw and closes the session, which
// closes the server's stdin and waits for it to exit.
//
// Usage:
//
//	client [--call NAME=JSON]... [--timeout 20s] [--settle 200ms] [--protocol VERSION] -- SERVER_CMD ARGS...
//
// For example, against the example server:
//
//	go run ./examples/cmd/client -- go run ./examples/cmd/everything
//
// Without --call it calls echo {"text":"hello"}, slow {"ms":300,"steps":3}
// and list_changed. --call NAME alone calls NAME with no arguments. Every call
// carries the progress token "call-N", N counting calls from 1. Asked for its
// roots, the client answers with one: the current directory.
//
// --timeout bounds the whole session, --settle is how long to keep listening
// for late notifications after the last call, and --protocol pins a protocol
// revision (such as 2025-11-25, for the initialize handshake); by default the
// newest one the server supports is negotiated. Over HTTP, --listen opens the
// GET stream for the server's own messages, which mcp-go leaves closed by
// default.
//
// Stdout gets one line per event, in the order they happen:
//
//	server NAME VERSION protocol REVISION
//	tools NAME...
//	notification METHOD PARAMS-JSON
//	roots answered with 1 root
//	result NAME "TEXT"          (result NAME error "TEXT" for a tool error)
//
// Result text longer than 200 bytes is shown as <N bytes>. Notifications are
// printed as they arrive, so they may interleave with results.
//
// The exit status is 0 when the session completed, 1 when it failed (the server
// did not start, broke the protocol, returned a JSON-RPC error or timed out),
// and 2 for a usage error. Every failure is reported as one line on stderr; the
// server's own stderr is passed through.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args)
	switch {
	case errors.Is(err, errHelp):
		fmt.Fprint(stdout, help)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "client: %s; usage: %s\n", oneLine(err.Error()), usageLine)
		return exitUsage
	}
	if err := runSession(cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "client: %s\n", oneLine(err.Error()))
		return exitFailed
	}
	return exitOK
}

// oneLine keeps a message to a single line, since errors from the server or
// the transport may span several.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
