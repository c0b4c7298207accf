//go:build !linux

package js

// threadID is 0 where threads' page faults cannot be read.
func threadID() int { return 0 }

// threadFaults is -1 where threads' page faults cannot be read.
func threadFaults(tid int) int64 { return -1 }
