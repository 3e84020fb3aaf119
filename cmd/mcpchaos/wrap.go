package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/faults"
)

type wrapFlags struct {
	faults     []string
	seed       uint64
	transcript string
	maxLine    int
	grace      time.Duration
	quiet      bool
}

func runWrap(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flagArgs, command, hasCommand := splitCommand(args)
	fs := pflag.NewFlagSet("wrap", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f wrapFlags
	fs.StringArrayVar(&f.faults, "fault", nil, "fault `SPEC` to inject, NAME[:KEY=VALUE,...] (repeatable; see mcpchaos faults)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed for every random decision (default: random, printed at start)")
	fs.StringVar(&f.transcript, "transcript", "", "write the session's events to `FILE` as JSON lines")
	fs.IntVar(&f.maxLine, "max-line", chaos.DefaultMaxLine, "longest line in `BYTES` classified as one message; longer lines pass through in pieces")
	fs.DurationVar(&f.grace, "grace", chaos.DefaultGrace, "shutdown ladder wait: stdin closed, wait, SIGTERM, wait, SIGKILL")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "do not print the seed line on stderr")
	if err := fs.Parse(flagArgs); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: mcpchaos wrap [flags] -- CMD [ARGS...]\n\nRelays a stdio MCP session between the client that started us and CMD,\ninjecting the given faults.\n\n%s", fs.FlagUsages())
			return exitOK
		}
		return usageError(stderr, "wrap: %v (see mcpchaos wrap --help)", err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "wrap: unexpected argument %q before --; put the server command after --, as in mcpchaos wrap -- python server.py", fs.Arg(0))
	}
	if !hasCommand || len(command) == 0 {
		return usageError(stderr, "wrap: no server command; put it after --, as in mcpchaos wrap -- python server.py")
	}
	var parsed []*faults.Fault
	for _, spec := range f.faults {
		flt, err := faults.Parse(spec)
		if err != nil {
			return usageError(stderr, "%v", err)
		}
		parsed = append(parsed, flt)
	}
	if f.maxLine <= 0 {
		return usageError(stderr, "wrap: --max-line must be positive, got %d", f.maxLine)
	}
	if f.grace <= 0 {
		return usageError(stderr, "wrap: --grace must be positive, got %s", f.grace)
	}
	if err := chaos.CheckCommand(command); err != nil {
		return usageError(stderr, "wrap: %v", err)
	}
	if !fs.Changed("seed") {
		f.seed = rand.Uint64()
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "mcpchaos wrap: seed %d, %d fault(s); replay with --seed %d\n", f.seed, len(parsed), f.seed)
	}

	cfg := chaos.Config{
		Command: command,
		Plan:    faults.NewPlan(f.seed, parsed),
		MaxLine: f.maxLine,
		Grace:   f.grace,
		Stderr:  stderr,
		Tool:    "mcpchaos " + version,
	}
	var transcript *os.File
	var recorder *chaos.JSONLRecorder
	if f.transcript != "" {
		var err error
		if transcript, err = os.Create(f.transcript); err != nil {
			return usageError(stderr, "wrap: cannot create the transcript: %v", err)
		}
		defer transcript.Close()
		recorder = chaos.NewJSONLRecorder(transcript)
		cfg.Recorder = recorder
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	_, err := chaos.Run(ctx, cfg, stdin, stdout)
	if err != nil {
		if transcript != nil {
			os.Remove(f.transcript)
		}
		return usageError(stderr, "wrap: %v", err)
	}
	if recorder != nil {
		if err := recorder.Flush(); err != nil {
			fmt.Fprintf(stderr, "mcpchaos wrap: %v\n", err)
			return exitUsage
		}
	}
	return exitOK
}

// faultsList prints what `mcpchaos faults` shows.
func runFaults(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return usageError(stderr, "faults takes no arguments")
	}
	var b strings.Builder
	b.WriteString("Faults (--fault NAME[:KEY=VALUE,...]):\n")
	for _, fam := range faults.Families() {
		fmt.Fprintf(&b, "\n  %s: %s\n", fam.Name, fam.Doc)
		for _, p := range fam.Params {
			fmt.Fprintf(&b, "      %s\n", p.Usage())
		}
		fmt.Fprintf(&b, "      fires %s the triggering message unless position= says otherwise\n", fam.Phase)
		fmt.Fprintf(&b, "      example: --fault '%s'\n", fam.Example)
	}
	b.WriteString("\nTrigger keys, accepted by every fault:\n")
	for _, p := range faults.TriggerParams() {
		fmt.Fprintf(&b, "      %s\n", p.Usage())
	}
	io.WriteString(stdout, b.String())
	return exitOK
}

func runScenarios(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		return usageError(stderr, "scenarios takes no arguments")
	}
	var b strings.Builder
	b.WriteString("Scenarios of mcpchaos test (--scenario NAME), each run against a fresh server after a no-fault baseline:\n")
	for _, s := range faults.ServerScenarios() {
		fmt.Fprintf(&b, "\n  %s: %s\n", s.Name, s.Doc)
		for _, f := range s.Faults {
			fmt.Fprintf(&b, "      --fault '%s'\n", f)
		}
	}
	io.WriteString(stdout, b.String())
	return exitOK
}
