//go:build unix

package replay_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used (user and system): what a
// benchmark on a machine others load compares, where wall time drifts.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
