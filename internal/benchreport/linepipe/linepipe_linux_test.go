package linepipe

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestStartBlocking: Start's ends of the pipes are in blocking mode, so
// the harness reads and writes with plain system calls; StartPolled's are
// not.
func TestStartBlocking(t *testing.T) {
	for name, start := range map[string]func(*exec.Cmd) (*Process, error){"Start": Start, "StartPolled": StartPolled} {
		p, err := start(exec.Command("cat"))
		if err != nil {
			t.Skip(err)
		}
		f := p.in.(*os.File)
		rc, err := f.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var flags uintptr
		var errno syscall.Errno
		rc.Control(func(fd uintptr) { flags, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0) })
		if errno != 0 {
			t.Fatal(errno)
		}
		if blocking := flags&syscall.O_NONBLOCK == 0; blocking != (name == "Start") {
			t.Errorf("%s: the harness's end of stdin is blocking: %v", name, blocking)
		}
		p.Close(10 * time.Second)
	}
}
