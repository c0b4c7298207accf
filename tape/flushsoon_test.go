package tape_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/tape"
)

// TestFlushSoonWhileAFrameEnds: the records written while a drain ends a
// full frame (64 KiB waited) are the next frame's, and FlushSoon gives
// them FlushDelay: it does not count the ending frame's bytes as theirs,
// which re-armed its timer at once at every request until that drain was
// done, and then ended a frame of a request or two right after it.
func TestFlushSoonWhileAFrameEnds(t *testing.T) {
	g := &gatedWriter{entered: make(chan struct{})}
	w, err := tape.NewWriter(g)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(header())
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`{"code":"` + strings.Repeat("x", 70<<10) + `"}`)
	request := func(n int, req json.RawMessage) {
		t.Helper()
		w.Hold()
		if err := w.Write(tape.Record{Type: tape.TypeRequest, N: n, Request: req}); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(tape.Record{Type: tape.TypeResult, N: n, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if err := w.Release(); err != nil {
			t.Fatal(err)
		}
	}
	request(1, big) // past 64 KiB: FlushSoon ends its frame at once
	shut := make(chan struct{})
	g.mu.Lock()
	g.shut = shut
	g.mu.Unlock()
	if err := w.FlushSoon(); err != nil {
		t.Fatal(err)
	}
	<-g.entered // the frame's end waits at the gate
	start := time.Now()
	request(2, json.RawMessage(`{"n":2}`)) // while that frame ends
	if err := w.FlushSoon(); err != nil {
		t.Fatal(err)
	}
	close(shut)
	at := w.Complete() // the full frame's end, and any frame ended with it
	g.mu.Lock()
	tp, err := tape.Read(bytes.NewReader(g.buf.Bytes()[:at]))
	g.mu.Unlock()
	if took := time.Since(start); took >= tape.FlushDelay {
		t.Skipf("the machine was too slow to tell: FlushDelay passed (%v)", took)
	}
	if err != nil || len(tp.Events) != 2 {
		t.Fatalf("the tape before FlushDelay: %v, %d events; want the full frame's request and result only, the next request's frame ending after FlushDelay", err, len(tp.Events))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err = tape.Read(bytes.NewReader(g.buf.Bytes()))
	if err != nil || len(tp.Events) != 4 {
		t.Fatalf("%v, %d events", err, len(tp.Events))
	}
}
