package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

// profileEnv names a file to write a CPU profile of the whole run to: the
// way scripts/bench-relay (and anyone asking where the relay's time goes)
// profiles mcpchaos as a user runs it, child processes and all.
const profileEnv = "MCPCHAOS_CPUPROFILE"

// traceEnv names a file to write an execution trace to: where a profile
// shows little CPU but the run is slow, the trace shows what the relay's
// goroutines waited on (go tool trace FILE).
const traceEnv = "MCPCHAOS_TRACE"

// startProfile starts the CPU profile profileEnv asks for
// and the execution trace traceEnv asks for; stop writes them.
func startProfile(stderr io.Writer) (stop func()) {
	stopCPU := startWriting(stderr, profileEnv, pprof.StartCPUProfile, pprof.StopCPUProfile)
	stopTrace := startWriting(stderr, traceEnv, trace.Start, trace.Stop)
	return func() { stopTrace(); stopCPU() }
}

func startWriting(stderr io.Writer, env string, start func(io.Writer) error, end func()) (stop func()) {
	path := os.Getenv(env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = start(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpchaos: %s: %v\n", env, err)
		return func() {}
	}
	return func() {
		end()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "mcpchaos: %s: %v\n", env, err)
		}
	}
}
