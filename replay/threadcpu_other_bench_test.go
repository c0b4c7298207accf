//go:build !linux

package replay_test

// threadCPU is 0 where the thread's CPU time is not read: the metrics
// built on it are then 0.
func threadCPU() int64 { return 0 }
