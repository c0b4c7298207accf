//go:build linux

package replay_test

import "golang.org/x/sys/unix"

// threadCPU is the CPU time (ns) the calling thread has used. A benchmark
// that locks its goroutine to its thread measures with it what a call
// costs on its own path, which neither the load of others nor the
// goroutines the call leaves work to (a tape's encoding) change.
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}
