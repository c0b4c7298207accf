// Package linepipe drives a process that answers each line on its stdin
// with one line on its stdout, for the benchmarks of issue 15's eval line
// round trip (`wasmeval eval`, a native python3.11 loop, Pyodide on node,
// and the echo floors under them), so that all of them are timed by the
// same harness.
//
// Start gives the child blocking pipes and reads and writes them on the
// calling goroutine: a round trip costs the harness one write(2) and one
// read(2) that sleeps in the kernel until the answer comes. StartPolled
// uses os/exec's pipes, which the Go poller waits on (a read that fails
// with EAGAIN, then epoll): that is what these benchmarks did before, kept
// for the floor benchmark that shows the difference.
package linepipe

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/wasmeval/wasmeval/internal/benchreport/cputime"
)

// Process is a started child with its stdin and stdout.
type Process struct {
	Cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// Start starts cmd (whose Stdin and Stdout must be unset) with blocking
// pipes on its stdin and stdout.
func Start(cmd *exec.Cmd) (*Process, error) {
	childIn, in, err := pipe()
	if err != nil {
		return nil, err
	}
	out, childOut, err := pipe()
	if err != nil {
		childIn.Close()
		in.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	err = cmd.Start()
	childIn.Close() // the child has its copies
	childOut.Close()
	if err != nil {
		in.Close()
		out.Close()
		return nil, err
	}
	return &Process{Cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// StartPolled starts cmd with os/exec's pipes (cmd.StdinPipe and
// cmd.StdoutPipe), which the Go poller waits on.
func StartPolled(cmd *exec.Cmd) (*Process, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Process{Cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// pipe is a pipe in blocking mode. os.Pipe's ends are non-blocking, for
// the poller; Fd puts an end in blocking mode for good, so that its reads
// and writes are plain system calls (os/exec does the same to the ends it
// hands the child).
func pipe() (r, w *os.File, err error) {
	r, w, err = os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("linepipe: %w", err)
	}
	r.Fd()
	w.Fd()
	return r, w, nil
}

// RoundTrip writes line (with its newline) and returns the answer line,
// newline included.
func (p *Process) RoundTrip(line []byte) ([]byte, error) {
	if _, err := p.in.Write(line); err != nil {
		return nil, fmt.Errorf("writing a line: %w", err)
	}
	return p.ReadLine()
}

// ReadLine reads one line of the child's stdout, newline included.
func (p *Process) ReadLine() ([]byte, error) {
	ans, err := p.out.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	return ans, nil
}

// Close closes the child's stdin and waits for it to exit, killing it
// after timeout.
func (p *Process) Close(timeout time.Duration) error {
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		p.Cmd.Process.Kill()
		return <-done
	}
}

// CPU is the CPU time the child has used so far (all its threads); ok
// false when it cannot be read.
func (p *Process) CPU() (time.Duration, bool) { return cputime.Process(p.Cmd.Process.Pid) }
