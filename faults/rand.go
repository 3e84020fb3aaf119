package faults

import (
	"hash/fnv"

	"github.com/mcpchaos/mcpchaos/wire"
)

// Draws is the random stream of one fault for one message: a pure function of
// (seed, fault key, direction, ordinal), never shared global state.
type Draws struct {
	state uint64
}

func newDraws(seed, faultKey uint64, dir wire.Direction, ordinal uint64) *Draws {
	s := splitmix(seed ^ 0x6d637063_68616f73) // "mcpchaos"
	s = splitmix(s ^ faultKey)
	s = splitmix(s ^ uint64(dir))
	s = splitmix(s ^ ordinal)
	return &Draws{state: s}
}

// Uint64 returns the next draw.
func (d *Draws) Uint64() uint64 {
	d.state += 0x9e3779b97f4a7c15
	return splitmix(d.state)
}

// Float64 returns a draw in [0, 1).
func (d *Draws) Float64() float64 {
	return float64(d.Uint64()>>11) / (1 << 53)
}

// Intn returns a draw in [0, n); n must be positive.
func (d *Draws) Intn(n int) int {
	return int(d.Uint64() % uint64(n))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// faultKey identifies a fault by its spec text and how many identical specs
// come before it, so that a fault's draws do not depend on where it sits in
// the plan.
func faultKey(spec string, duplicatesBefore int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(spec))
	return splitmix(h.Sum64() ^ uint64(duplicatesBefore))
}
