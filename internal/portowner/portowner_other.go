//go:build !linux

package portowner

// Listener is not told on this system.
func Listener(port int) (Process, bool) { return Process{}, false }

// Descends cannot be told on this system.
func Descends(pid, root int) bool { return false }

// Addresses cannot be told on this system.
func Addresses(port int) []string { return nil }

// StartedBefore cannot be told on this system.
func StartedBefore(pid, other int) bool { return false }

// Supported says whether this system tells who listens on a port.
const Supported = false
