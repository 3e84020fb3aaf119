package faults

import (
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// stall is zero buffering: the transport stops reading one direction, so the
// peer writing in it fills the pipe and blocks in write. SDKs that write from
// the loop that must also read hang here.
var stallFamily = &Family{
	Name:  "stall",
	Doc:   "stop reading one direction for a while or for ever, so its writer fills the pipe and blocks (zero buffering)",
	Phase: Before,
	Params: []Param{
		{Name: "dir", Type: TypeDirection, Doc: "direction to stop reading (default: the triggering message's)"},
		{Name: "for", Type: TypeDuration, Default: "forever", Forever: true, Doc: "how long to stall"},
		{Name: "shrink", Type: TypeBool, Default: "false", Doc: "also shrink the OS pipe to its minimum (one page) so the writer blocks sooner"},
		streamParam("stop reading that stream alone, so the server's messages outside a call are held while the answers to calls flow (dir is s2c)"),
	},
	New: func(v Values) (Action, error) {
		s := stall{dir: v.Direction("dir"), d: v.Duration("for"), shrink: v.Bool("shrink"), stream: v.String("stream")}
		if s.stream == StreamGET {
			if s.dir == wire.ToServer {
				return nil, fmt.Errorf("stream=get stalls the server's messages on the GET stream: dir must be s2c (or unset)")
			}
			s.dir = wire.ToClient
		}
		return s, nil
	},
	Example: "stall:on=s2c:notification:notifications/progress,for=5s",
}

type stall struct {
	dir    wire.Direction
	d      time.Duration
	shrink bool
	stream string
}

func (s stall) Fire(c *FireContext) Effect {
	dir := s.dir
	if dir == 0 {
		dir = c.Dir
	}
	st := &Stall{Dir: dir, ShrinkPipe: s.shrink}
	st.For = s.d
	how := "until the session ends"
	if st.For > 0 {
		how = "for " + st.For.String()
	}
	what := dir.String()
	if s.stream == StreamGET {
		what = "the client's GET stream"
	}
	return Effect{Stall: st, Stream: s.stream, Detail: fmt.Sprintf("stop reading %s %s", what, how)}
}
