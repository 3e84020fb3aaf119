package faults

import (
	"fmt"
	"time"
)

// linger is a server that does not go when told: it ignores its stdin closing
// and SIGTERM for a while. The MCP stdio shutdown is close stdin, wait,
// SIGTERM, wait, SIGKILL; a client that closes stdin and then waits for ever
// hangs on such a server, and one that escalates too early kills a server
// still flushing its state. linger tests the client's escalation.
var lingerFamily = &Family{
	Name:  "linger",
	Doc:   "the server end ignores its stdin closing and SIGTERM/SIGINT for a while, or until killed (for=forever): when the client closes its output or signals mcpchaos wrap, the shutdown starts only after for has passed (SIGKILL always ends wrap and the server)",
	Phase: Before,
	Params: []Param{
		{Name: "for", Type: TypeDuration, Default: "5s", Forever: true, Doc: "how long to ignore the client's EOF and SIGTERM/SIGINT, counted from the first of them; forever: until the client sends SIGKILL"},
	},
	New: func(v Values) (Action, error) {
		return linger{d: v.Duration("for")}, nil
	},
	Example: "linger:for=forever",
}

type linger struct {
	d time.Duration // 0: until killed
}

func (l linger) Fire(*FireContext) Effect {
	if l.d == 0 {
		return Effect{Linger: &Linger{}, Detail: "ignore the client's EOF and SIGTERM/SIGINT until killed"}
	}
	return Effect{Linger: &Linger{For: l.d}, Detail: fmt.Sprintf("ignore the client's EOF and SIGTERM/SIGINT for %s once they come", l.d)}
}

// Linger puts off the session's shutdown when the client ends it.
type Linger struct {
	// For is how long, counted from the client's EOF or first SIGTERM or
	// SIGINT to mcpchaos wrap, whichever comes first; 0 is until SIGKILL.
	For time.Duration
}
