package faults

import (
	"fmt"
	"time"
)

// delay holds one message before it is forwarded: a slow peer, without the
// pipe filling up as under a stall. The jitter is drawn from the fault's
// seeded draws, so a seed replays the same delays.
var delayFamily = &Family{
	Name:  "delay",
	Doc:   "hold the triggering message for a while (plus seeded jitter) before forwarding it",
	Phase: Before,
	Local: true,
	Params: []Param{
		{Name: "for", Type: TypeDuration, Default: "500ms", Doc: "how long to hold the message"},
		{Name: "jitter", Type: TypeDuration, Default: "0s", Doc: "add up to this much more, drawn from the seed"},
	},
	New: func(v Values) (Action, error) {
		return delay{d: v.Duration("for"), jitter: v.Duration("jitter")}, nil
	},
	Example: "delay:on=s2c:response:tools/call,for=1s,jitter=250ms",
}

type delay struct {
	d      time.Duration
	jitter time.Duration
}

func (d delay) Fire(c *FireContext) Effect {
	total := d.d
	if d.jitter > 0 {
		total += time.Duration(c.Draws.Uint64() % (uint64(d.jitter) + 1))
	}
	return Effect{Delay: total, Detail: fmt.Sprintf("hold the message for %s", total)}
}
