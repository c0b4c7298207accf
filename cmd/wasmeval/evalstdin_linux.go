package main

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// rawStdin reads a pipe or a socket on stdin through a non-blocking
// duplicate of its descriptor, outside the Go poller: Read tries read(2),
// and when nothing is there waits in poll(2), a blocking system call of
// the caller's goroutine, for the data or for interrupt's eventfd.
//
// The duplicate shares stdin's file description, so O_NONBLOCK is set on
// stdin as well until close: eval is then the only reader of its stdin
// (what is read is buffered here, never left for another reader), so
// nobody else sees the flag while eval runs.
type rawStdin struct {
	fd      int // the non-blocking duplicate
	wake    int // an eventfd, readable once interrupted
	restore func()
}

// openStdin returns r's rawStdin when r is a file that is a pipe or a
// socket; nil for anything else. A terminal is left alone: its file
// description is the shell's too.
func openStdin(r io.Reader) *rawStdin {
	f, ok := r.(*os.File)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil { // not f.Fd(), which would make f blocking
		return nil
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
		return nil
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(dup)
		return nil
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		unix.Close(wake)
		return nil
	}
	s := &rawStdin{fd: dup, wake: wake, restore: func() {}}
	if !wasNonblock {
		s.restore = func() { unix.SetNonblock(dup, false) }
	}
	return s
}

// Read reads what stdin holds, waiting for it when it holds nothing; after
// interrupt it fails with errStdinInterrupted.
func (s *rawStdin) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(s.fd, b)
		switch {
		case err == nil && n > 0:
			return n, nil
		case err == nil:
			return 0, io.EOF
		case err == unix.EINTR:
			continue
		case err != unix.EAGAIN:
			return 0, &os.PathError{Op: "read", Path: "stdin", Err: err}
		}
		fds := [2]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: int32(s.wake), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds[:], -1); err != nil && err != unix.EINTR {
			return 0, &os.PathError{Op: "poll", Path: "stdin", Err: err}
		}
		if fds[1].Revents != 0 {
			return 0, errStdinInterrupted
		}
		// stdin readable, at its end, or failed: the next read says which.
	}
}

// readNow reads what stdin holds now, without waiting: n bytes (0 at its
// end), or ok false when nothing is there yet or the read failed.
func (s *rawStdin) readNow(b []byte) (n int, ok bool) {
	for {
		n, err := unix.Read(s.fd, b)
		if err == unix.EINTR {
			continue
		}
		return n, err == nil
	}
}

// interrupt makes a Read that waits, and every later one, fail.
func (s *rawStdin) interrupt() {
	one := [8]byte{1}
	unix.Write(s.wake, one[:])
}

// close puts stdin back in the mode it had and closes the duplicate.
func (s *rawStdin) close() {
	s.restore()
	unix.Close(s.fd)
	unix.Close(s.wake)
}

func fcntl(fd, cmd, arg int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(arg))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}
