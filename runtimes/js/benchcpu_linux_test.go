package js_test

import (
	"syscall"
	"time"
)

// threadCPU is the calling thread's CPU time so far: on a busy machine it
// says more about a benchmark's own work than the time on the clock does.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
