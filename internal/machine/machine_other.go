//go:build !linux

package machine

// ReadCPU cannot read the machine's CPU counters here: the machine is taken
// as busy, so that a verdict that depends on time, made beside other runs,
// is confirmed by a run alone.
func ReadCPU() (CPUSample, bool) { return CPUSample{}, false }

// MemAvailable is unknown here: only the cores size a matrix.
func MemAvailable() (uint64, bool) { return 0, false }

// runnable is unknown here: deadlines count wall time.
func runnable() (int, bool) { return 0, false }
