package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/chaos/probe"
	"github.com/mcpchaos/mcpchaos/faults"
	"github.com/mcpchaos/mcpchaos/reports"
	"github.com/mcpchaos/mcpchaos/suite"
)

func runTest(args []string, stdout, stderr io.Writer) int {
	flagArgs, command, hasCommand := splitCommand(args)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		m         matrixFlags
		calls     []string
		skipTools []string
	)
	m.register(fs, suite.DefaultDeadline, "how long a request may stay unanswered before it is a hang",
		"shutdown ladder wait: stdin closed, wait, SIGTERM, wait, SIGKILL")
	fs.StringArrayVar(&calls, "call", nil, "call this tool, as `NAME=JSON` arguments (repeatable; default: every tool, arguments from its schema)")
	fs.StringArrayVar(&skipTools, "skip-tool", nil, "never call the tool `NAME` (repeatable)")
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos test [flags] [-- CMD [ARGS...]]\n\nProbes the stdio MCP server CMD (default: the bundled example server) through a\nno-fault baseline and a matrix of fault scenarios, and judges what happened.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "test: %v (see mcpchaos test --help)", err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "test: unexpected argument %q; put the server command after --, as in mcpchaos test -- python server.py", fs.Arg(0))
	}
	if hasCommand && len(command) == 0 {
		return usageError(stderr, "test: nothing after --; give the server command, as in mcpchaos test -- python server.py")
	}
	defaultTarget := !hasCommand
	if defaultTarget {
		self, err := os.Executable()
		if err != nil {
			return usageError(stderr, "test: cannot find the bundled example server: %v", err)
		}
		command = []string{self, "serve"}
	}
	selected, err := m.resolve(fs, faults.ServerScenarios())
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	probeCalls, err := parseCalls(calls)
	if err != nil {
		return usageError(stderr, "test: %v", err)
	}
	fmt.Fprintf(stdout, "mcpchaos test: seed %d, %d scenario(s) against %s\n", m.seed, len(selected), suite.ShellQuote(command))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	report, err := suite.Run(ctx, suite.Options{
		Command:       command,
		Scenarios:     selected,
		Seed:          m.seed,
		Deadline:      m.deadline,
		Grace:         m.grace,
		Parallel:      m.parallel,
		TranscriptDir: m.transcriptDir,
		Probe:         probe.Config{Calls: probeCalls, SkipTools: skipTools},
		Repro:         reproLine(command, defaultTarget, m.deadline),
		Tool:          "mcpchaos " + version,
		Version:       version,
	})
	if err != nil {
		return runFailed(stderr, "test", "server", err)
	}
	return finishReport(report, m.reportPath, m.strict, stdout, stderr)
}

// finishReport prints the summary, writes the JSON report, and returns the
// exit status the report calls for.
func finishReport(report *reports.Report, path string, strict bool, stdout, stderr io.Writer) int {
	reports.WriteSummary(stdout, report)
	if path != "" {
		if err := writeReport(path, report); err != nil {
			return usageError(stderr, "%v", err)
		}
	}
	return report.ExitCode(strict)
}

// reproLine renders the command that replays one scenario.
func reproLine(command []string, defaultTarget bool, deadline time.Duration) func(string, uint64) string {
	return func(scenario string, seed uint64) string {
		argv := []string{"mcpchaos", "test", "--scenario", scenario, "--seed", fmt.Sprint(seed)}
		if deadline != suite.DefaultDeadline {
			argv = append(argv, "--deadline", deadline.String())
		}
		if !defaultTarget {
			argv = append(append(argv, "--"), command...)
		}
		return suite.ShellQuote(argv)
	}
}

func parseCalls(specs []string) ([]probe.Call, error) {
	var out []probe.Call
	for _, s := range specs {
		name, args, ok := strings.Cut(s, "=")
		if !ok {
			args = "{}"
		}
		if name == "" {
			return nil, fmt.Errorf("--call %q: no tool name; write NAME=JSON, as in --call 'echo={\"text\":\"hi\"}'", s)
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(args), &obj); err != nil {
			return nil, fmt.Errorf("--call %s: the arguments are not a JSON object: %v", name, err)
		}
		out = append(out, probe.Call{Tool: name, Args: json.RawMessage(args)})
	}
	return out, nil
}

func writeReport(path string, r *reports.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("cannot write the report: %w", err)
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		return fmt.Errorf("writing the report: %w", err)
	}
	return f.Close()
}

func lastLines(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}
