package portowner

import "fmt"

// Process is a process that listens on a port.
type Process struct {
	PID     int
	Command string // its command line, space-separated; "" when unreadable
}

func (p Process) String() string {
	if p.Command == "" {
		return fmt.Sprintf("process %d", p.PID)
	}
	return fmt.Sprintf("process %d (%s)", p.PID, p.Command)
}
