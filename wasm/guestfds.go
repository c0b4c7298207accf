package wasm

import (
	"sync"
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"golang.org/x/sys/unix"
)

// MaxOpenHostFiles caps the host files and folders one GuestFS (one
// session's guest) holds open at once. Each is a host file descriptor, and
// the process has a fixed number of them: a guest that opened files in a
// loop would otherwise take them all, and every other session (and serve's
// listener) would fail to open anything.
const MaxOpenHostFiles = 1024

// errnoTooManyFiles is the errno of an open refused for the caps on open
// files: ERANGE, which no open returns otherwise, stands for EMFILE
// (missing from wazero's errno set) until InstantiateWASI's module
// translates it.
const errnoTooManyFiles = experimentalsys.ERANGE

// hostFilesOpen counts the host files all GuestFSs of the process hold
// open; maxHostFilesOpen caps it at half the process's descriptor limit
// (Go raises the soft limit to the hard one at start), leaving the other
// half to the host.
var (
	hostFilesOpen    atomic.Int64
	maxHostFilesOpen = sync.OnceValue(func() int64 {
		var r unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err == nil && r.Cur > 0 && r.Cur < 1<<40 {
			return int64(r.Cur / 2)
		}
		return 8192
	})
)

// fdCount is a GuestFS's count of the host files it holds open.
type fdCount struct {
	mu     sync.Mutex
	n      int64
	closed bool // the GuestFS is closed: its files no longer count
}

// take reserves one open file, or reports false past a cap.
func (c *fdCount) take() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= MaxOpenHostFiles {
		return false
	}
	if hostFilesOpen.Add(1) > maxHostFilesOpen() {
		hostFilesOpen.Add(-1)
		return false
	}
	c.n++
	return true
}

// release gives back one file that take reserved.
func (c *fdCount) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n > 0 && !c.closed {
		c.n--
		hostFilesOpen.Add(-1)
	}
}

// close gives back every file still counted: the GuestFS is closed, and
// whatever closes its files later (or never) no longer counts.
func (c *fdCount) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	hostFilesOpen.Add(-c.n)
	c.n, c.closed = 0, true
}

// OpenHostFiles returns how many host files the GuestFS holds open, and
// how many all GuestFSs of the process do.
func (g *GuestFS) OpenHostFiles() (mine, all int64) {
	g.fds.mu.Lock()
	defer g.fds.mu.Unlock()
	return g.fds.n, hostFilesOpen.Load()
}
