package tape_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/tape"
)

// gatedWriter blocks its writes while shut, and says when one waits.
type gatedWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	shut    chan struct{} // nil: open
	entered chan struct{} // a write waits at the gate
	once    sync.Once
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	shut := g.shut
	g.mu.Unlock()
	if shut != nil {
		g.once.Do(func() { close(g.entered) })
		<-shut
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

// TestFrameEndsOffTheWritersPath: the end of a frame that FlushSoon's
// timer or Release asks for (zstd compressing the frame, and its write)
// happens on a goroutine of its own, without the Writer's lock, so that
// the next request's Hold, Write and Release do not wait for it while the
// tape's writer is slow; Complete waits for it, and the tape reads whole.
func TestFrameEndsOffTheWritersPath(t *testing.T) {
	g := &gatedWriter{entered: make(chan struct{})}
	w, err := tape.NewWriter(g)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(header())
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	start := w.Complete()
	shut := make(chan struct{})
	g.mu.Lock()
	g.shut = shut
	g.mu.Unlock()

	// FlushSoon's timer finds the request held and leaves the end of the
	// frame to Release. (A request small enough that the compressor
	// writes nothing before the frame ends.)
	big := json.RawMessage(`{"code":"` + strings.Repeat("x", 1000) + `"}`)
	w.Hold()
	if err := w.Write(tape.Record{Type: tape.TypeRequest, N: 1, Request: big}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(tape.Record{Type: tape.TypeResult, N: 1, Result: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushSoon(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(tape.FlushDelay + 50*time.Millisecond) // for the timer to find the hold

	done := make(chan error, 1)
	go func() {
		err := w.Release() // ends the frame, or the timer does
		for n := 2; n <= 3 && err == nil; n++ {
			<-g.entered // the frame's end waits at the gate
			w.Hold()
			err = w.Write(tape.Deferred(tape.Record{Type: tape.TypeRequest, N: n}, json.RawMessage(`{"n":2}`)))
			if err == nil {
				err = w.Write(tape.Record{Type: tape.TypeResult, N: n, Result: json.RawMessage(`{}`)})
			}
			if err == nil {
				err = w.Release()
			}
			if err == nil {
				err = w.FlushSoon()
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testenv.Stretch(10 * time.Second)):
		close(shut)
		t.Fatal("the next requests waited for the end of the frame before them (zstd and a slow writer) on their path")
	}
	close(shut)
	at := w.Complete()
	if at == start {
		t.Fatal("Complete did not wait for the end of the frame under way")
	}
	g.mu.Lock()
	tp, err := tape.Read(bytes.NewReader(g.buf.Bytes()[:at]))
	g.mu.Unlock()
	if err != nil || len(tp.Events) < 2 || len(tp.Events)%2 != 0 {
		t.Fatalf("the tape up to Complete: %v, %d events; want whole requests", err, len(tp.Events))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err = tape.Read(bytes.NewReader(g.buf.Bytes()))
	if err != nil || len(tp.Events) != 6 || string(tp.Events[0].Request) != string(big) || string(tp.Events[4].Request) != `{"n":2}` {
		t.Fatalf("%v %d events", err, len(tp.Events))
	}
}
