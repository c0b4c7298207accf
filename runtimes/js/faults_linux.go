package js

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// threadID returns the calling thread's id; the caller has locked its
// goroutine to the thread.
func threadID() int { return unix.Gettid() }

// threadFaults returns the minor page faults of thread tid so far, or -1:
// a thread that grows its data touches fresh pages, one that spins over
// what it has does not.
func threadFaults(tid int) int64 {
	if tid <= 0 {
		return -1
	}
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return -1
	}
	// The fields after the command, which is in parentheses: state is
	// field 3 and minflt field 10.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 8 {
		return -1
	}
	n, err := strconv.ParseInt(string(fields[7]), 10, 64)
	if err != nil {
		return -1
	}
	return n
}
