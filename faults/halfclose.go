package faults

import (
	"fmt"

	"github.com/mcpchaos/mcpchaos/wire"
)

// halfClose closes our read end of one pipe: the peer writing in that
// direction gets EPIPE (or SIGPIPE) on its next write while the other
// direction keeps flowing, the state a crashed or exiting peer leaves behind.
var halfCloseFamily = &Family{
	Name:  "half-close",
	Doc:   "close our read end of one direction's pipe so its writer gets EPIPE, while the other direction keeps flowing",
	Phase: After,
	Params: []Param{
		{Name: "dir", Type: TypeDirection, Default: "s2c", Doc: "direction whose pipe to close: s2c makes the server's writes fail, c2s the client's"},
	},
	New:     func(v Values) (Action, error) { return halfClose{dir: v.Direction("dir")}, nil },
	Example: "half-close:dir=s2c,on=c2s:request:tools/call",
}

type halfClose struct{ dir wire.Direction }

func (h halfClose) Fire(*FireContext) Effect {
	writer := "server"
	if h.dir == wire.ToServer {
		writer = "client"
	}
	return Effect{HalfClose: h.dir, Detail: fmt.Sprintf("close the read end of %s; the %s's writes now fail", h.dir, writer)}
}
