package machine

import (
	"bytes"
	"os"
	"strconv"
)

// ReadCPU reads the machine's CPU time counters (all cores, in clock
// ticks) from /proc/stat: how much was spent, and how much of it idle.
func ReadCPU() (CPUSample, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUSample{}, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := bytes.Fields(line)
	// cpu user nice system idle iowait irq softirq steal ...
	if len(fields) < 6 || string(fields[0]) != "cpu" {
		return CPUSample{}, false
	}
	var s CPUSample
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return CPUSample{}, false
		}
		if i >= 8 { // guest and guest_nice are counted in user and nice already
			break
		}
		s.Total += v
		if i == 3 || i == 4 { // idle, iowait
			s.Idle += v
		}
	}
	return s, true
}

// MemAvailable reads how much memory the machine can give new processes
// without swapping (MemAvailable in /proc/meminfo).
func MemAvailable() (uint64, bool) {
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

// runnable reads how many threads are ready to run now (procs_running in
// /proc/stat).
func runnable() (int, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("procs_running "))
		if !ok {
			continue
		}
		n, err := strconv.Atoi(string(bytes.TrimSpace(rest)))
		return n, err == nil
	}
	return 0, false
}
