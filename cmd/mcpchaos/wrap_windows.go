package main

import "github.com/mcpchaos/mcpchaos/chaos"

// probeOnSignal does nothing on Windows, which has no SIGUSR1 to ask with;
// nor does it run there: wrap refuses to (see refuseStdio).
func probeOnSignal(*chaos.Session, string) (stop func()) { return func() {} }
