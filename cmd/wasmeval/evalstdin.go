package main

import (
	"bufio"
	"context"
	"errors"
	"io"
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
// socket (openStdin: read(2) on a non-blocking duplicate, waiting in
// poll(2)), and in a goroutine of its own otherwise (readLines: a
// terminal, an io.Pipe in tests).
//
// Why (issue 15, the eval line round trip): a goroutine blocked in read(2)
// hands each line to eval's over a channel, which wakes a second thread.
// Waiting in the Go poller instead (what eval did next) parks the
// goroutine with every P idle, so that Go's sysmon thread goes to deep
// sleep and the next system call wakes it again: per line about 2.2
// context switches and 0.5 futex calls in eval. poll(2) as a blocking
// system call keeps the goroutine's P in its system call, not idle, so
// neither happens: 1.2 context switches and 0.05-0.1 futex calls a line,
// ~18 µs less CPU and ~10 µs less wall a line, measured by hand
// (docs/benchmarks.md, "eval's stdin").
func newLineSource(ctx context.Context, r io.Reader, max int) lineSource {
	if in := openStdin(r); in != nil {
		return newPolledLines(ctx, in, max)
	}
	return readLines(r, max)
}

// polledLines reads stdin (openStdin) on the caller's goroutine. The end
// of ctx interrupts a read that waits.
type polledLines struct {
	in       *rawStdin
	src      stashed
	br       *bufio.Reader // reads src
	max      int
	stopWake func() bool
}

// stashed reads what ended read first, then in.
type stashed struct {
	in    *rawStdin
	stash []byte
	peek  [4096]byte // ended's reads; stash is a part of it
}

func (s *stashed) Read(b []byte) (int, error) {
	if len(s.stash) > 0 {
		n := copy(b, s.stash)
		s.stash = s.stash[n:]
		return n, nil
	}
	return s.in.Read(b)
}

func newPolledLines(ctx context.Context, in *rawStdin, max int) *polledLines {
	p := &polledLines{in: in, max: max}
	p.src.in = in
	p.br = bufio.NewReaderSize(&p.src, 64<<10)
	p.stopWake = context.AfterFunc(ctx, in.interrupt)
	return p
}

// ended tries one read that does not wait when nothing is buffered: 0
// bytes is the end (a pipe's or a socket's stays readable as such); what
// it reads is kept for next.
func (p *polledLines) ended() bool {
	if p.br.Buffered() > 0 || len(p.src.stash) > 0 {
		return false
	}
	n, ok := p.in.readNow(p.src.peek[:])
	if !ok { // nothing yet, or an error that next meets again
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
	if ctx.Err() != nil || errors.Is(ln.err, errStdinInterrupted) {
		return line{}, true
	}
	return ln, false
}

func (p *polledLines) stop() {
	p.stopWake()
	p.in.close() // a duplicate of stdin: fd 0 stays open
}

// errStdinInterrupted is a read's of rawStdin after its interrupt.
var errStdinInterrupted = errors.New("reading stdin: interrupted")

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
