package main

import (
	"io"

	"github.com/mcpchaos/mcpchaos/chaos"
)

// stdioSupported is chaos.StdioSupported: nil where an stdio session can
// run, ErrStdioUnsupported on Windows. A test swaps it to see what Windows
// prints.
var stdioSupported = chaos.StdioSupported

// refuseStdio prints why what (a command, or one use of it) cannot run on
// this OS and returns the usage status, when it relays an stdio session and
// this OS has none (Windows: no process groups, no POSIX signals). refused
// is false where stdio sessions run.
func refuseStdio(stderr io.Writer, what string) (code int, refused bool) {
	if stdioSupported() == nil {
		return exitOK, false
	}
	io.WriteString(stderr, stdioRefusal(what))
	return exitUsage, true
}

// stdioRefusal says what is not supported on Windows, why, and what works
// there instead; docs/platforms.md quotes it.
func stdioRefusal(what string) string {
	return "mcpchaos: " + what + " is not supported on Windows: it relays a stdio MCP session, which needs process groups and POSIX signals (the SIGTERM/SIGKILL shutdown ladder, signal faults) that Windows lacks.\n" +
		"  On Windows, use mcpchaos test --url URL (an HTTP MCP server, running or started with -- CMD), proxy, test-client --server-url URL, judge, report, serve, faults, scenarios or version; or run mcpchaos under WSL.\n" +
		"  See docs/platforms.md.\n"
}
