package chaos

import "errors"

// ErrStdioUnsupported is what Start and Run return on an OS where a stdio
// session cannot run (Windows): the relay needs a unix process model, the
// server in a process group of its own, the shutdown ladder's SIGTERM and
// SIGKILL to that group, and the SIGSTOP and SIGCONT of signal faults.
// Served (an HTTP server the run starts) works there: it is killed instead.
var ErrStdioUnsupported = errors.New("stdio sessions are not supported on Windows: the relay needs process groups and POSIX signals (the SIGTERM/SIGKILL shutdown ladder, signal faults), which Windows lacks; see docs/platforms.md")

// StdioSupported reports, as ErrStdioUnsupported, whether stdio sessions
// (Start, Run) can run on this OS; nil where they can.
func StdioSupported() error {
	if !stdioSupported {
		return ErrStdioUnsupported
	}
	return nil
}
