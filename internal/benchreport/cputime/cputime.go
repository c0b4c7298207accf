// Package cputime measures CPU time for the benchmarks, next to their wall
// time: on a machine shared with other work, wall times stretch with the
// load while CPU times hold, so make bench reports both
// (internal/benchreport).
package cputime

import "time"

// Self is the CPU time (user and system) this process has used so far,
// all its threads; 0 where the platform does not say.
func Self() time.Duration { return self() }

// Process is the CPU time the process pid has used so far, all its
// threads, in nanoseconds where the platform counts them (Linux's
// schedstat); ok is false where it cannot be read.
func Process(pid int) (d time.Duration, ok bool) { return process(pid) }
