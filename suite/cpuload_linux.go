package suite

import (
	"bytes"
	"os"
	"strconv"
)

// readCPU reads the machine's CPU time counters (all cores, in clock
// ticks) from /proc/stat: how much was spent, and how much of it idle.
func readCPU() (cpuSample, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuSample{}, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := bytes.Fields(line)
	// cpu user nice system idle iowait irq softirq steal ...
	if len(fields) < 6 || string(fields[0]) != "cpu" {
		return cpuSample{}, false
	}
	var s cpuSample
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return cpuSample{}, false
		}
		if i >= 8 { // guest and guest_nice are counted in user and nice already
			break
		}
		s.total += v
		if i == 3 || i == 4 { // idle, iowait
			s.idle += v
		}
	}
	return s, true
}

// memAvailable reads how much memory the machine can give new processes
// without swapping (MemAvailable in /proc/meminfo).
func memAvailable() (uint64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("MemAvailable:"))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest) // "23672000 kB"
		if len(fields) == 0 {
			return 0, false
		}
		kb, err := strconv.ParseUint(string(fields[0]), 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
