package faults

import (
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/wire"
)

// throttle makes one direction a slow link: every frame is written in small
// chunks paced to a byte rate, so a large answer takes seconds to arrive and
// a receiver's read timeouts and the sender's back-pressure show.
var throttleFamily = &Family{
	Name:  "throttle",
	Doc:   "pace every frame written in one direction to a byte rate, from the triggering message on",
	Phase: Before,
	Params: []Param{
		{Name: "rate", Type: TypeSize, Default: "4KiB", Doc: "bytes per second (4096, 64KiB, 1MiB)"},
		{Name: "for", Type: TypeDuration, Default: "forever", Forever: true, Doc: "how long the link stays slow; forever is the rest of the session"},
		{Name: "dir", Type: TypeDirection, Doc: "direction to slow: c2s toward the server, s2c toward the client (default: the triggering message's)"},
	},
	New: func(v Values) (Action, error) {
		t := throttle{rate: v.Size("rate"), d: v.Duration("for"), dir: v.Direction("dir")}
		if t.rate < minRate {
			return nil, fmt.Errorf("rate: must be at least %d bytes per second, or one frame could take hours", minRate)
		}
		return t, nil
	},
	Example: "throttle:on=c2s:request:tools/call,dir=s2c,rate=16KiB,for=10s",
}

// minRate keeps a typo (rate=1) from stalling a session for ever in effect.
const minRate = 64

type throttle struct {
	rate int64
	d    time.Duration
	dir  wire.Direction
}

func (t throttle) Fire(c *FireContext) Effect {
	dir := t.dir
	if dir == 0 {
		dir = c.Dir
	}
	how := "for the rest of the session"
	if t.d > 0 {
		how = "for " + t.d.String()
	}
	return Effect{
		Throttle: &Throttle{Dir: dir, Rate: t.rate, For: t.d},
		Detail:   fmt.Sprintf("pace frames toward the %s to %d bytes per second %s", receiver(dir), t.rate, how),
	}
}
