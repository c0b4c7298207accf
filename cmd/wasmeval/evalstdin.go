package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// lineSource gives eval its stdin a line at a time.
type lineSource interface {
	// next returns the next line; interrupted true when ctx ended while
	// it waited.
	next(ctx context.Context) (ln line, interrupted bool)
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
	br       *bufio.Reader
	max      int
	stopWake func() bool
	restore  func()
}

func newPolledLines(ctx context.Context, f *os.File, restore func(), max int) *polledLines {
	p := &polledLines{f: f, br: bufio.NewReaderSize(f, 64<<10), max: max, restore: restore}
	p.stopWake = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	return p
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
	select {
	case <-ctx.Done():
		return line{}, true
	case ln := <-s.c:
		return ln, false
	}
}
