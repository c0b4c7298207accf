package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Streaming limits. A cell must never wait on its client: events go
// through a bounded queue that a goroutine of their own writes out, each
// write under a deadline. A client that stops reading is treated as gone:
// its stream ends (no result event) and its cell is stopped as for a
// disconnect; the session keeps its state.
const (
	// sseQueueBytes bounds the events waiting for one client.
	sseQueueBytes = 1 << 20
	// sseStallTimeout is how long a cell waits for room in a full queue
	// (a client reading slower than the cell writes) before the stream
	// ends: the only time a cell waits on its client.
	sseStallTimeout = time.Second
)

// writeTimeout is how long writing one event (or a whole JSON answer) may
// take; past it the stream (or connection) ends. A variable for tests.
var writeTimeout = 10 * time.Second

// sseKeepalive is how long a stream may stay silent before the writer
// sends a ": keepalive" comment, so that proxies and clients with idle
// timeouts keep a stream whose cell is quietly computing (or waiting on a
// host call). A variable for tests.
var sseKeepalive = 15 * time.Second

// marshalPlain encodes v as the plain API does (writeJSON): no HTML
// escaping, so "<", ">" and "&" in outputs arrive as themselves.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// sseWriter writes Server-Sent Events, one JSON data line each, from a
// goroutine of its own.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu      sync.Mutex
	queue   [][]byte
	queued  int       // bytes in queue
	ended   bool      // the stream is over: new events are dropped
	closing bool      // no more events come; write the queue out and stop
	drainBy time.Time // with closing: when to give up writing the queue
	why     string    // why the stream ended early, for logs
	onEnd   func()    // called once when the stream ends early

	wake chan struct{} // an event was queued, or closing (cap 1)
	room chan struct{} // the writer took an event off the queue (cap 1)
	done chan struct{} // closed when the writer returns
}

// newSSE starts a stream on w; onEnd, when the stream ends early (its
// client stopped reading or went away), stops what feeds it.
func newSSE(w http.ResponseWriter, onEnd func()) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s := &sseWriter{
		w: w, rc: http.NewResponseController(w), onEnd: onEnd,
		wake: make(chan struct{}, 1), room: make(chan struct{}, 1), done: make(chan struct{}),
	}
	s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	w.WriteHeader(http.StatusOK)
	go s.writer()
	if err := s.rc.Flush(); err != nil {
		s.end("writing the header: " + err.Error())
	}
	return s
}

// send queues an event. It waits only while the queue is full, at most
// sseStallTimeout, and drops the event once the stream has ended.
func (s *sseWriter) send(event string, v any) {
	data, err := marshalPlain(v)
	if err != nil {
		data, _ = marshalPlain(errorBody("host_error", err.Error()))
		event = "error"
	}
	// JSON has no raw newlines, so one data line holds it.
	frame := fmt.Appendf(nil, "event: %s\ndata: %s\n\n", event, data)
	var stall <-chan time.Time
	for {
		s.mu.Lock()
		if s.ended || s.closing {
			s.mu.Unlock()
			return
		}
		if s.queued == 0 || s.queued+len(frame) <= sseQueueBytes {
			s.queue = append(s.queue, frame)
			s.queued += len(frame)
			s.mu.Unlock()
			signal(s.wake)
			return
		}
		s.mu.Unlock()
		if stall == nil {
			t := time.NewTimer(sseStallTimeout)
			defer t.Stop()
			stall = t.C
		}
		select {
		case <-s.room:
		case <-s.done:
		case <-stall:
			s.end(fmt.Sprintf("the client read nothing for %v with %d KiB of events waiting", sseStallTimeout, sseQueueBytes>>10))
			return
		}
	}
}

// event queues a cell's event (sandbox.EventFunc), named after its kind:
// cell_start, stdout, stderr, display, result, status or cell_end. The
// eval's own answer is the event named done, never result.
func (s *sseWriter) event(ev sandbox.Event) { s.send(string(ev.Kind), ev) }

// isEnded reports whether the stream ended before its last event.
func (s *sseWriter) isEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// end ends the stream early: queued and later events are dropped, and a
// write in progress fails now.
func (s *sseWriter) end(why string) {
	s.mu.Lock()
	first := !s.ended
	if first {
		s.ended, s.why = true, why
		s.queue, s.queued = nil, 0
	}
	s.mu.Unlock()
	s.rc.SetWriteDeadline(time.Now())
	signal(s.wake)
	if first && s.onEnd != nil {
		s.onEnd()
	}
}

// close writes out what is queued, for at most writeTimeout in all, and
// returns when the writer has stopped: after it nothing touches the
// ResponseWriter. It returns why the stream ended early, or "".
func (s *sseWriter) close() string {
	s.mu.Lock()
	s.closing = true
	s.drainBy = time.Now().Add(writeTimeout)
	s.mu.Unlock()
	signal(s.wake)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}

func (s *sseWriter) writer() {
	defer close(s.done)
	idle := time.NewTimer(sseKeepalive)
	defer idle.Stop()
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.ended && !s.closing {
			s.mu.Unlock()
			select {
			case <-s.wake:
			case <-idle.C:
				// Nothing to say for a while: a comment line, which
				// EventSource and SSE parsers skip, keeps the stream.
				s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
				_, err := io.WriteString(s.w, ": keepalive\n\n")
				if err == nil {
					err = s.rc.Flush()
				}
				if err != nil {
					s.end("writing a keepalive: " + strings.TrimSpace(err.Error()))
					return
				}
				idle.Reset(sseKeepalive)
			}
			s.mu.Lock()
		}
		if s.ended || len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		frame := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.queued -= len(frame)
		deadline := time.Now().Add(writeTimeout)
		if s.closing && s.drainBy.Before(deadline) {
			deadline = s.drainBy
		}
		s.mu.Unlock()
		signal(s.room)
		s.rc.SetWriteDeadline(deadline)
		_, err := s.w.Write(frame)
		if err == nil {
			err = s.rc.Flush()
		}
		if err != nil {
			s.end("writing an event: " + strings.TrimSpace(err.Error()))
			return
		}
		idle.Reset(sseKeepalive)
	}
}

// signal wakes whoever waits on c, without waiting itself.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
