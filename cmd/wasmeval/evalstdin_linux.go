package main

import (
	"io"
	"os"
	"syscall"
)

// pollStdin returns a non-blocking duplicate of r for the Go poller when r
// is a file that is a pipe or a socket, and a func that puts the file back
// in blocking mode; nil for anything else. A terminal is left alone: its
// file description is the shell's too.
//
// The duplicate shares r's file description, so O_NONBLOCK is set on r as
// well until restore: eval is then the only reader of its stdin (what is
// read is buffered here, never left for another reader), so nobody else
// sees the flag while eval runs.
func pollStdin(r io.Reader) (*os.File, func()) {
	f, ok := r.(*os.File)
	if !ok {
		return nil, nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return nil, nil
	}
	rc, err := f.SyscallConn() // not f.Fd(), which would make f blocking
	if err != nil {
		return nil, nil
	}
	dup := -1
	var wasNonblock bool
	rc.Control(func(fd uintptr) {
		flags, err := fcntl(int(fd), syscall.F_GETFL, 0)
		if err != nil {
			return
		}
		wasNonblock = flags&syscall.O_NONBLOCK != 0
		if d, err := fcntl(int(fd), syscall.F_DUPFD_CLOEXEC, 0); err == nil {
			dup = d
		}
	})
	if dup < 0 {
		return nil, nil
	}
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return nil, nil
	}
	restore := func() {}
	if !wasNonblock {
		restore = func() {
			rc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), false) })
		}
	}
	// NewFile sees O_NONBLOCK and registers the file with the poller.
	return os.NewFile(uintptr(dup), f.Name()), restore
}

func fcntl(fd, cmd, arg int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(arg))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// readNow reads what rc's non-blocking file holds now, without waiting:
// n bytes (0 at its end), or ok false when nothing is there yet, the read
// deadline has passed or the read failed.
func readNow(rc syscall.RawConn, b []byte) (n int, ok bool) {
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		n, rerr = syscall.Read(int(fd), b)
		return true // do not wait
	}); err != nil || rerr != nil {
		return 0, false
	}
	return n, true
}
