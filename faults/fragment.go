package faults

import (
	"fmt"
	"slices"
	"time"
)

// fragment writes one frame in several partial writes with pauses between
// them, as a slow or congested pipe delivers it: a receiver that assumes one
// read is one message, or parses before the newline, breaks. The cut points
// come from the fault's seeded draws, so a seed replays the same pieces.
var fragmentFamily = &Family{
	Name:  "fragment",
	Doc:   "write the triggering message in N partial writes with pauses between them; the newline comes only with the last",
	Phase: Before,
	Local: true,
	Params: []Param{
		{Name: "pieces", Type: TypeInt, Default: "3", Doc: "how many writes (fewer when the message is shorter than that many bytes)"},
		{Name: "gap", Type: TypeDuration, Default: "10ms", Doc: "pause between two writes"},
	},
	New: func(v Values) (Action, error) {
		if err := mustBeBefore(v); err != nil {
			return nil, err
		}
		f := fragment{pieces: v.Int("pieces"), gap: v.Duration("gap")}
		if f.pieces < 2 || f.pieces > maxPieces {
			return nil, fmt.Errorf("pieces: must be between 2 and %d", maxPieces)
		}
		return f, nil
	},
	Example: "fragment:on=c2s:request:tools/call,pieces=4,gap=50ms",
}

// maxPieces bounds one firing: each piece is a write system call and a pause.
const maxPieces = 10000

type fragment struct {
	pieces int
	gap    time.Duration
}

func (f fragment) Fire(c *FireContext) Effect {
	body, end := splitEnding(c.Message.Raw)
	// Cuts fall after byte 1..len(body) of the body: the last piece always
	// holds the line ending, and every piece holds at least one byte.
	limit := len(body)
	if len(end) == 0 {
		limit-- // a last frame without a line ending: its last piece is its last byte
	}
	n := max(0, min(f.pieces-1, limit))
	if n == 0 {
		return Effect{Skipped: true, Detail: "skipped: the message is too short to cut"}
	}
	cuts := drawCuts(c.Draws, limit, n)
	return Effect{
		Fragment: &Fragment{Cuts: cuts, Gap: f.gap},
		Detail:   fmt.Sprintf("write the message in %d pieces, cut after bytes %v, %s apart", len(cuts)+1, cuts, f.gap),
	}
}

// drawCuts draws n distinct offsets in [1, limit], ascending. When n is
// close to limit it takes them all but a drawn few, so it never loops long.
func drawCuts(d *Draws, limit, n int) []int {
	if n >= limit {
		cuts := make([]int, limit)
		for i := range cuts {
			cuts[i] = i + 1
		}
		return cuts
	}
	pick, keep := n, true
	if n > limit/2 {
		pick, keep = limit-n, false // draw the offsets to leave out instead
	}
	chosen := map[int]bool{}
	for len(chosen) < pick {
		chosen[1+d.Intn(limit)] = true
	}
	cuts := make([]int, 0, n)
	if keep {
		for c := range chosen {
			cuts = append(cuts, c)
		}
		slices.Sort(cuts)
		return cuts
	}
	for c := 1; c <= limit; c++ {
		if !chosen[c] {
			cuts = append(cuts, c)
		}
	}
	return cuts
}
