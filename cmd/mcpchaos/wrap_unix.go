//go:build unix

package main

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/mcpchaos/mcpchaos/chaos"
	"github.com/mcpchaos/mcpchaos/wire"
)

// probeOnSignal writes our pid to path and sends a liveness probe to the
// client on each SIGUSR1: test-client uses it when the client program is past
// its deadline, to tell a stuck receive loop from one that still answers.
func probeOnSignal(session *chaos.Session, path string) (stop func()) {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())), 0o644)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-usr1:
				session.Probe(wire.ToClient, "the client program is past its deadline")
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(usr1)
		close(done)
	}
}
