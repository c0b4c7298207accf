package testenv

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Stretch returns d, the wall time within which a test expects something
// to end (a stopped cell, a refused bomb), stretched by the machine's load:
// multiplied by the one-minute load average over the number of CPUs, when
// that is above 1. Such bounds guard against a hang or a stall, which runs
// orders of magnitude longer (a native parse of minutes, a cell that is
// never stopped), not against slowness: on a CI machine at load 20 with two
// CPUs, a cell that ends in 0.3 s idle took 3 s of wall time, and fixed
// bounds of 2-3 s failed with nothing wrong. Speed itself is measured by
// benchmarks, never by tests.
func Stretch(d time.Duration) time.Duration {
	return time.Duration(float64(d) * loadFactor())
}

// loadFactor is the one-minute load average per CPU, at least 1, and 1
// where the load average cannot be read.
func loadFactor() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 1
	}
	f, _, _ := strings.Cut(string(b), " ")
	load, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return 1
	}
	return max(1, load/float64(runtime.NumCPU()))
}
