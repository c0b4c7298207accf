package main

import (
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// rawStdin reads a pipe or a socket on stdin through a non-blocking
// duplicate of its descriptor, outside the Go poller: Read tries read(2),
// and when nothing is there waits in poll(2), a blocking system call of
// the caller's goroutine, for the data or for interrupt's eventfd.
//
// A client that sends its next line as soon as it has read an answer
// gets it read without a sleep: while the last wait was shorter than
// spinWait, Read first polls stdin without waiting for up to spinWait,
// yielding the CPU between tries, and only then sleeps in poll(2). Waking a
// sleeping thread costs 20-30 µs on a virtual machine whose idle CPUs halt
// at once (docs/benchmarks.md, "The eval line around the cell"), which is
// half of a back-to-back round trip; a client that pauses longer (an
// agent, a person) makes Read sleep at once from its next line on.
//
// The duplicate shares stdin's file description, so O_NONBLOCK is set on
// stdin as well until close: eval is then the only reader of its stdin
// (what is read is buffered here, never left for another reader), so
// nobody else sees the flag while eval runs.
type rawStdin struct {
	fd      int // the non-blocking duplicate
	wake    int // an eventfd, readable once interrupted
	restore func()
	// spin: the last wait was shorter than spinWait, the longest Read
	// tries stdin again before it sleeps (stdinSpinWait; tests change it).
	spin     bool
	spinWait time.Duration
	spins    int // waits that ended without a sleep, for tests
}

// stdinSpinWait is rawStdin's spinWait.
const stdinSpinWait = 100 * time.Microsecond

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
	s := &rawStdin{fd: dup, wake: wake, restore: func() {}, spinWait: stdinSpinWait}
	if !wasNonblock {
		s.restore = func() { unix.SetNonblock(dup, false) }
	}
	return s
}

// Read reads what stdin holds, waiting for it when it holds nothing; after
// interrupt it fails with errStdinInterrupted.
func (s *rawStdin) Read(b []byte) (int, error) {
	var start time.Time // of the wait, when the first read found nothing
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
		if start.IsZero() {
			start = time.Now()
			if s.spin && s.spinWaits(start) {
				continue // to the read, or to poll(2) that finds the interrupt
			}
		}
		fds := [2]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: int32(s.wake), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds[:], -1); err != nil && err != unix.EINTR {
			return 0, &os.PathError{Op: "poll", Path: "stdin", Err: err}
		}
		if fds[1].Revents != 0 {
			return 0, errStdinInterrupted
		}
		// stdin readable, at its end, or failed: the next read says which.
		s.spin = time.Since(start) < s.spinWait
	}
}

// spinWaits waits for stdin or the interrupt for up to spinWait from
// start, without sleeping: poll(2) that does not wait, the CPU yielded
// between tries. false when neither came.
func (s *rawStdin) spinWaits(start time.Time) bool {
	fds := [2]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}, {Fd: int32(s.wake), Events: unix.POLLIN}}
	for time.Since(start) < s.spinWait {
		unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		if n, _ := unix.Poll(fds[:], 0); n > 0 {
			s.spins++
			return true
		}
	}
	s.spin = false
	return false
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
