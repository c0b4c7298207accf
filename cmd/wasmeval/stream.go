package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
)

// streamUsage is the part of eval's usage that says what --stream writes.
const streamUsage = `  Each line of stdout is a JSON object with "line", the number of the
  request's line on stdin (counting blank ones), and "event":
    {"line": 1, "event": "cell_start", "cell": 0, "title": "...", "language": "py"}
    {"line": 1, "event": "stdout", "cell": 0, "text": "hi\n"}     (and "stderr")
    {"line": 1, "event": "display", "cell": 0, "data": {MIME: text}}
    {"line": 1, "event": "result", "cell": 0, "data": {MIME: text}}
                       (the cell's last-expression value, not the answer)
    {"line": 1, "event": "status", "cell": 0, "status": "log", "text": "..."}
    {"line": 1, "event": "cell_end", "cell": 0, "title": "...", "language": "py",
     "status": "complete", "error" or "cancelled", "durationMs": 12,
     "text": "why the sandbox failed the cell, like a timeout"}
  as they happen, each flushed; then the request's last line, its answer:
    {"line": 1, "event": "done", "content": [...], "details": {...}}
    {"line": 1, "event": "error", "error": {"code": "...", "message": "line 1: ..."}}
  which is the line eval writes without --stream, with "line" and "event"
  added. The cell never waits for a slow reader: when 4 MiB of events wait
  to be written, further output, display and status events of the request
  are left out (never cell_start or cell_end) and
    {"line": 1, "event": "dropped", "events": N, "bytes": N}
  says how many where they would have been; the done line is whole all the
  same. It is written before the next request runs, as without --stream.
  Lines of another profile
  (evaluate_python) stream their code's events the same way (one cell,
  titled with the profile), then their answer as done or error.
`

// streamQueueBytes bounds the event lines waiting to be written; past it
// events are dropped, not waited for. A variable for tests.
var streamQueueBytes = 4 << 20

// streamCloseTimeout is how long eval's end waits for queued lines to be
// written to a reader that does not take them.
const streamCloseTimeout = 10 * time.Second

// errStreamWrite stops the running request's cells once stdout cannot be
// written: nobody can read their output or answer any more.
var errStreamWrite = errors.New("wasmeval eval: stdout cannot be written")

// eventStream writes eval --stream's lines from a goroutine of its own, so
// that a cell never waits on its reader (see streamUsage).
type eventStream struct {
	w io.Writer

	mu        sync.Mutex
	cond      *sync.Cond // signalled when a line was written or writing failed
	line      int        // the request line being run
	queue     [][]byte
	queued    int // bytes in queue
	writing   bool
	dropped   int // events left out since the last one queued
	dropBytes int64
	err       error                   // the first write error
	cancel    context.CancelCauseFunc // the running request's, or nil
	closing   bool
	done      chan struct{} // closed when the writer returns
}

func newEventStream(w io.Writer) *eventStream {
	s := &eventStream{w: w, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.writer()
	return s
}

// eventLine is an event of a cell: sandbox.Event's fields, with its kind
// as "event" and the request's line number.
type eventLine struct {
	Line       int               `json:"line"`
	Event      sandbox.EventKind `json:"event"`
	Cell       int               `json:"cell"`
	Title      string            `json:"title,omitempty"`
	Language   string            `json:"language,omitempty"`
	Text       string            `json:"text,omitempty"`
	Status     string            `json:"status,omitempty"`
	Data       map[string]string `json:"data,omitempty"`
	DurationMs *int64            `json:"durationMs,omitempty"`
}

type droppedLine struct {
	Line   int    `json:"line"`
	Event  string `json:"event"`
	Events int    `json:"events"`
	Bytes  int64  `json:"bytes"`
}

// at says that the lines from now on are request line n's. Nil-safe, as
// the other methods eval calls, for eval without --stream.
func (s *eventStream) at(n int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.line = n
	s.mu.Unlock()
}

// observe returns the context to run the current request under: its
// cells' events become lines, and a failed write cancels it.
func (s *eventStream) observe(ctx context.Context) context.Context {
	if s == nil {
		return ctx
	}
	ctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.cancel = cancel
	if s.err != nil {
		cancel(errStreamWrite)
	}
	s.mu.Unlock()
	return sandbox.WithEventFunc(ctx, s.event)
}

// event queues a cell's event without waiting; past streamQueueBytes it
// counts it as dropped instead, except cell_start and cell_end, which are
// few (one each a cell) and which readers pair.
func (s *eventStream) event(ev sandbox.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.closing {
		return
	}
	b, err := marshalLine(eventLine{
		Line: s.line, Event: ev.Kind, Cell: ev.Cell, Title: ev.Title, Language: ev.Language,
		Text: ev.Text, Status: ev.Status, Data: ev.Bundle, DurationMs: ev.DurationMs,
	})
	if err != nil {
		return // a Bundle is strings: it always encodes
	}
	structural := ev.Kind == sandbox.EventCellStart || ev.Kind == sandbox.EventCellEnd
	if !structural && s.queued > 0 && s.queued+len(b) > streamQueueBytes {
		s.dropped++
		s.dropBytes += int64(len(b))
		return
	}
	s.enqueueLocked(b)
}

// enqueueLocked queues b, after the dropped line that says what was left
// out before it, if anything was.
func (s *eventStream) enqueueLocked(b []byte) {
	if s.dropped > 0 {
		d, _ := marshalLine(droppedLine{Line: s.line, Event: "dropped", Events: s.dropped, Bytes: s.dropBytes})
		s.queue = append(s.queue, d)
		s.queued += len(d)
		s.dropped, s.dropBytes = 0, 0
	}
	s.queue = append(s.queue, b)
	s.queued += len(b)
	s.cond.Broadcast()
}

// result writes the current request's answer (a *sandbox.Result or an
// errorLine) after its events, and returns once all is written: like eval
// without --stream, the next request runs after its reader took this one's
// answer. It returns the write error, if writing failed.
func (s *eventStream) result(v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(nil)
		s.cancel = nil
	}
	// The line eval writes without --stream, with line and event first.
	event := "done"
	if _, ok := v.(errorLine); ok {
		event = "error"
	}
	plain, err := marshalLine(v)
	if err != nil {
		return err
	}
	b := fmt.Appendf(nil, `{"line":%d,"event":%q`, s.line, event)
	if len(plain) > 3 { // not "{}\n"
		b = append(b, ',')
	}
	b = append(b, plain[1:]...)
	if s.err == nil {
		s.enqueueLocked(b)
	}
	for s.err == nil && (len(s.queue) > 0 || s.writing) {
		s.cond.Wait()
	}
	return s.err
}

// close writes out what is queued, waiting at most streamCloseTimeout for
// a reader that does not take it, and stops the writer.
func (s *eventStream) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closing = true
	s.cond.Broadcast()
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-time.After(streamCloseTimeout):
	}
}

func (s *eventStream) writer() {
	defer close(s.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for len(s.queue) == 0 && !s.closing {
			s.cond.Wait()
		}
		if len(s.queue) == 0 || s.err != nil {
			return
		}
		b := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.queued -= len(b)
		s.writing = true
		s.mu.Unlock()
		// One write a line, straight to stdout: each is flushed as it
		// goes.
		_, err := s.w.Write(b)
		s.mu.Lock()
		s.writing = false
		if err != nil {
			s.err = err
			s.queue, s.queued = nil, 0
			if s.cancel != nil {
				s.cancel(errStreamWrite)
			}
		}
		s.cond.Broadcast()
		if s.err != nil {
			return
		}
	}
}

// marshalLine encodes v as one line of compact JSON, without HTML
// escaping, as eval writes its results.
func marshalLine(v any) ([]byte, error) {
	var b lineBuffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b, nil
}

type lineBuffer []byte

func (b *lineBuffer) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}
