package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// settleSession is a fakeSession with the session's work between cells
// (sandbox.Session.Settle); it logs its evals and settles, each settle
// with the answers written by then.
type settleSession struct {
	*fakeSession
	answers func() int
	settled chan struct{} // a send a settle

	mu  sync.Mutex
	log []string
}

func (s *settleSession) Eval(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
	s.mu.Lock()
	s.log = append(s.log, "eval "+req.Cells[0].Code)
	s.mu.Unlock()
	return s.fakeSession.Eval(ctx, req)
}

func (s *settleSession) Settle() {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("settle after %d answers", s.answers()))
	s.mu.Unlock()
	s.settled <- struct{}{}
}

func (s *settleSession) logged() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "\n")
}

// TestEvalSettlesAfterEachAnswer: eval has the session do its work between
// cells (the checkpoint) once each answer is written, before it reads the
// next line, so that the next cell does not wait for it (issue 15); not
// when stdin has already ended, as the session is closed next.
func TestEvalSettlesAfterEachAnswer(t *testing.T) {
	for _, ended := range []bool{false, true} {
		t.Run(fmt.Sprintf("stdin ended %v", ended), func(t *testing.T) {
			r, w := blockingPipe(t)
			var out lockedBuffer
			s := &settleSession{fakeSession: &fakeSession{}, settled: make(chan struct{}, 3),
				answers: func() int { return strings.Count(out.String(), "\n") }}
			old := openSession
			openSession = func(context.Context, sandbox.SessionOptions, sandbox.Options) (evalSession, error) { return s, nil }
			t.Cleanup(func() { openSession = old })

			io.WriteString(w, req("ok one")+"\n\nnot json\n"+req("ok two")+"\n")
			if ended {
				w.Close()
			}
			done := make(chan int, 1)
			var errb lockedBuffer
			go func() { done <- doMain(context.Background(), []string{"eval", "--cwd", t.TempDir()}, r, &out, &errb) }()
			want := []string{
				"eval ok one", "settle after 1 answers",
				"settle after 2 answers", // the invalid line's answer
				"eval ok two",
			}
			if !ended {
				want = append(want, "settle after 3 answers")
			}
			if !ended {
				for range 3 { // the third settle comes before stdin ends
					select {
					case <-s.settled:
					case <-time.After(testenv.Stretch(10 * time.Second)):
						t.Fatalf("eval settled fewer than 3 times before stdin ended:\n%s", s.logged())
					}
				}
				w.Close()
			}
			select {
			case code := <-done:
				if code != exitInvalid {
					t.Fatalf("exit %d, want %d; stderr: %s", code, exitInvalid, errb.String())
				}
			case <-time.After(testenv.Stretch(10 * time.Second)):
				t.Fatal("eval did not end")
			}
			if got := s.logged(); got != strings.Join(want, "\n") {
				t.Errorf("evals and settles:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
		})
	}
}

// TestLineSourceEnded: ended says whether stdin has ended without waiting
// and without losing what it reads, for the polled pipe and the reading
// goroutine alike.
func TestLineSourceEnded(t *testing.T) {
	for _, polled := range []bool{true, false} {
		t.Run(fmt.Sprintf("polled %v", polled), func(t *testing.T) {
			// A line lost would make next wait: ctx's end stops it then.
			ctx, cancel := context.WithTimeout(context.Background(), testenv.Stretch(10*time.Second))
			defer cancel()
			var src lineSource
			var w io.WriteCloser
			if polled {
				r, pw := blockingPipe(t)
				src, w = newLineSource(ctx, r, maxLineBytes), pw
				if _, ok := src.(*polledLines); !ok {
					t.Fatalf("a pipe is read by %T, want *polledLines", src)
				}
			} else {
				r, pw := io.Pipe()
				src, w = newLineSource(ctx, r, maxLineBytes), pw
				if _, ok := src.(*lineStream); !ok {
					t.Fatalf("an io.Pipe is read by %T, want *lineStream", src)
				}
			}
			defer src.stop()
			next := func(want string) {
				t.Helper()
				ln, interrupted := src.next(ctx)
				if interrupted || ln.err != nil || string(ln.text) != want {
					t.Fatalf("next: %q, %v (interrupted %v), want %q", ln.text, ln.err, interrupted, want)
				}
			}
			go io.WriteString(w, "a\n") // an io.Pipe's write waits for the read
			next("a")
			if src.ended() {
				t.Fatal("ended with stdin open and nothing to read")
			}
			wrote := make(chan struct{})
			go func() { io.WriteString(w, "b\n"); close(wrote) }()
			if polled {
				<-wrote
			}
			if src.ended() { // reads "b" if it is there, which next must still give
				t.Fatal("ended with a line to read")
			}
			next("b")
			<-wrote
			w.Close()
			deadline := time.Now().Add(testenv.Stretch(10 * time.Second))
			for !src.ended() {
				if time.Now().After(deadline) {
					t.Fatal("not ended after stdin closed")
				}
				time.Sleep(time.Millisecond)
			}
			if ln, _ := src.next(ctx); ln.err != io.EOF {
				t.Fatalf("next after ended: %q, %v, want io.EOF", ln.text, ln.err)
			}
		})
	}
}
