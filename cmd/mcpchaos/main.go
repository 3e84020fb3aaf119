// Command mcpchaos is a fault-injecting man-in-the-middle for the Model
// Context Protocol. This package only parses flags and wires packages
// together; see the chaos, faults and wire packages for the work.
package main

import (
	"io"

	"github.com/mcpchaos/mcpchaos/internal/buildinfo"
	"os"
	"os/signal"
	"syscall"
)

// version is this build's version: stamped by releases (scripts/package),
// recorded by go install ...@vX, or 0.1.0-dev (see internal/buildinfo).
var version = buildinfo.Version()

func main() {
	// With SIGPIPE observed, a write to a client that went away returns EPIPE
	// (which the relay records) instead of killing us before the transcript is
	// written. Handlers reset on exec, so the server is unaffected.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	stopProfile := startProfile(os.Stderr)
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	os.Exit(code)
}

const usage = `mcpchaos: a chaos man-in-the-middle for MCP servers and clients

Usage:
  mcpchaos test [flags] [-- CMD [ARGS...]] probe a stdio server (default: the bundled example)
                                           through a matrix of fault scenarios, judge, report
  mcpchaos test-client [flags] -- CLIENT    run a client program against faults (it must launch
                                           $MCPCHAOS_SERVER_COMMAND), judge its hangs and crashes
  mcpchaos explore [flags] [-- CMD [ARGS...]]
                                           search a server's fault space (default: the bundled
                                           example), shrink each finding to its smallest plan
  mcpchaos explore-client [flags] -- CLIENT
                                           the same search against a client program
  mcpchaos wrap [flags] -- CMD [ARGS...]   relay a stdio MCP session to CMD, injecting faults
  mcpchaos proxy --upstream URL [flags]    relay MCP over HTTP (streamable HTTP, legacy SSE)
                                           to URL, injecting faults
  mcpchaos judge TRANSCRIPT.jsonl...       judge stored transcripts again, offline
  mcpchaos report [--format F] REPORT.json render a --report file: text, markdown, junit,
                                           github (annotations), html or json
  mcpchaos report diff OLD.json NEW.json   what a change fixed, broke, left failing
  mcpchaos report merge SHARD.json...      join the reports of a run's --shard K/N parts
  mcpchaos serve [--http ADDR]             serve the bundled example MCP server on stdio (or HTTP)
  mcpchaos faults                          list the faults, their parameters and the trigger keys
  mcpchaos scenarios                       list the built-in scenarios and the bug classes they expose
  mcpchaos version                         print the version

Run 'mcpchaos COMMAND --help' for a command's flags.

Environment:
  MCPCHAOS_CPUPROFILE=FILE                 write a CPU profile of the whole run to FILE
                                           (read it with go tool pprof)
  MCPCHAOS_TRACE=FILE                      write an execution trace to FILE: what the
                                           relay waited on (read it with go tool trace)
`

// run is main without the process: tests call it in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		io.WriteString(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "wrap":
		return runWrap(args[1:], stdin, stdout, stderr)
	case "proxy":
		return runProxy(args[1:], stdout, stderr)
	case "test":
		return runTest(args[1:], stdout, stderr)
	case "test-client":
		return runTestClient(args[1:], stdout, stderr)
	case "explore":
		return runExplore(args[1:], stdout, stderr)
	case "explore-client":
		return runExploreClient(args[1:], stdout, stderr)
	case "judge":
		return runJudge(args[1:], stdout, stderr)
	case "report":
		return runReport(args[1:], stdout, stderr)
	case "serve":
		return runServe(args[1:], stdin, stdout, stderr)
	case "faults":
		return runFaults(args[1:], stdout, stderr)
	case "scenarios":
		return runScenarios(args[1:], stdout, stderr)
	case "version", "--version":
		io.WriteString(stdout, buildinfo.Read().String())
		return exitOK
	case "help", "-h", "--help":
		io.WriteString(stdout, usage)
		return exitOK
	}
	return usageError(stderr, "unknown command %q (run mcpchaos help to see the commands)", args[0])
}
