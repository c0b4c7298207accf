//go:build !unix

package replay_test

import "time"

var cpuStart = time.Now()

// cpuTime stands in for the process's CPU time with the wall clock.
func cpuTime() time.Duration { return time.Since(cpuStart) }
