package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"syscall"
	"time"
)

// lineSource gives eval its stdin a line at a time.
type lineSource interface {
	// next returns the next line; interrupted true when ctx ended while
	// it waited.
	next(ctx context.Context) (ln line, interrupted bool)
	// ended reports, without waiting, whether the input is known to have
	// ended: nothing is left to read but its end. false when unsure.
	ended() bool
	stop()
}

// newLineSource reads r on eval's own goroutine when r is a pipe or a
// socket that the Go poller can wait on (pollStdin), and in a goroutine of
// its own otherwise (readLines: a terminal, an io.Pipe in tests).
//
// Why (issue 15, the eval line round trip): a goroutine blocked in read(2)
// hands each line to eval's over a channel, which wakes a second thread;
// and a thread blocked in read(2) while a cell's checkpoint runs beside it
// has its P retaken by the Go runtime's sysmon, which then keeps polling
// every 20 µs. Waiting in the poller on eval's goroutine costs neither: the
// thread that wakes from epoll runs the line itself.
func newLineSource(ctx context.Context, r io.Reader, max int) lineSource {
	if f, restore := pollStdin(r); f != nil {
		return newPolledLines(ctx, f, restore, max)
	}
	return readLines(r, max)
}

// polledLines reads a non-blocking file through the Go poller, on the
// caller's goroutine. The end of ctx stops a read that waits, through a
// read deadline in the past.
type polledLines struct {
	f        *os.File
	rc       syscall.RawConn // f's, for ended's read that does not wait
	src      stashed
	br       *bufio.Reader // reads src
	max      int
	stopWake func() bool
	restore  func()
}

// stashed reads what ended read first, then f.
type stashed struct {
	f     *os.File
	stash []byte
	peek  [4096]byte // ended's reads; stash is a part of it
}

func (s *stashed) Read(b []byte) (int, error) {
	if len(s.stash) > 0 {
		n := copy(b, s.stash)
		s.stash = s.stash[n:]
		return n, nil
	}
	return s.f.Read(b)
}

func newPolledLines(ctx context.Context, f *os.File, restore func(), max int) *polledLines {
	p := &polledLines{f: f, max: max, restore: restore}
	p.src.f = f
	p.br = bufio.NewReaderSize(&p.src, 64<<10)
	p.rc, _ = f.SyscallConn()
	p.stopWake = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	return p
}

// ended tries one read that does not wait when nothing is buffered: 0
// bytes is the end (a pipe's or a socket's stays readable as such); what
// it reads is kept for next.
func (p *polledLines) ended() bool {
	if p.rc == nil || p.br.Buffered() > 0 || len(p.src.stash) > 0 {
		return false
	}
	n, ok := readNow(p.rc, p.src.peek[:])
	if !ok { // nothing yet, ctx's end, or an error that next meets again
		return false
	}
	if n > 0 {
		p.src.stash = p.src.peek[:n]
		return false
	}
	return true
}

func (p *polledLines) next(ctx context.Context) (line, bool) {
	ln := readLine(p.br, p.max)
	if ctx.Err() != nil {
		return line{}, true
	}
	if errors.Is(ln.err, os.ErrDeadlineExceeded) { // set only by ctx's end
		return line{}, true
	}
	return ln, false
}

func (p *polledLines) stop() {
	p.stopWake()
	p.f.Close() // a dup of stdin: fd 0 stays open
	p.restore()
}

// next waits for the reading goroutine's next line, or ctx's end.
func (s *lineStream) next(ctx context.Context) (line, bool) {
	if s.ahead != nil {
		ln := *s.ahead
		s.ahead = nil
		return ln, false
	}
	select {
	case <-ctx.Done():
		return line{}, true
	case ln := <-s.c:
		return ln, false
	}
}

// ended takes the reading goroutine's next line if it is ready, for next.
func (s *lineStream) ended() bool {
	if s.ahead == nil {
		select {
		case ln := <-s.c:
			s.ahead = &ln
		default:
			return false
		}
	}
	return errors.Is(s.ahead.err, io.EOF)
}
