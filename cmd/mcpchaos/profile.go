package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// profileEnv names a file to write a CPU profile of the whole run to: the
// way scripts/bench-relay (and anyone asking where the relay's time goes)
// profiles mcpchaos as a user runs it, child processes and all.
const profileEnv = "MCPCHAOS_CPUPROFILE"

// startProfile starts the CPU profile profileEnv asks for; stop writes it.
func startProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv(profileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcpchaos: %s: %v\n", profileEnv, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "mcpchaos: %s: %v\n", profileEnv, err)
		}
	}
}
