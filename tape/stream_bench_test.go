package tape_test

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/wasmeval/wasmeval/tape"
)

// BenchmarkWriterRequest is what a recorded request of one trivial cell
// costs the tape: its request and result records, and the end of its
// frame: soon (FlushSoon, what a recorder does) or at once (Flush).
func BenchmarkWriterRequest(b *testing.B) {
	b.Run("soon", func(b *testing.B) { benchWriterRequest(b, (*tape.Writer).FlushSoon) })
	b.Run("flush", func(b *testing.B) { benchWriterRequest(b, (*tape.Writer).Flush) })
}

func benchWriterRequest(b *testing.B, flush func(*tape.Writer) error) {
	w, err := tape.NewWriter(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	w.Write(header())
	req := json.RawMessage(`{"cells":[{"language":"py","code":"1 + 1"}]}`)
	res := json.RawMessage(`{"content":[{"type":"text","text":"2"}],"details":{"cells":[{"index":0,"language":"py","code":"1 + 1","status":"complete","output":"","result":"2","exitCode":0,"durationMs":0,"statusEvents":[]}],"isError":false}}`)
	b.ReportAllocs()
	for b.Loop() {
		w.Write(tape.Record{Type: tape.TypeRequest, N: 1, Request: req})
		w.Write(tape.Record{Type: tape.TypeResult, N: 1, Result: res})
		if err := flush(w); err != nil {
			b.Fatal(err)
		}
	}
}

// rawJSON is a deferred value whose JSON is given.
type rawJSON []byte

func (r rawJSON) AppendJSON(b []byte) ([]byte, bool) { return append(b, r...), true }

// BenchmarkWriterDeferred is what the tape costs a recorded request of one
// trivial JavaScript cell as a session records it: its request and result
// deferred (tape.Deferred, encoded by a drain or at the frame's end), held
// from one to the other, and the frame ended soon (FlushSoon). cpu-ns/op
// counts the drains' and the flush timer's goroutines too.
func BenchmarkWriterDeferred(b *testing.B) {
	w, err := tape.NewWriter(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	w.Write(header())
	req := rawJSON(`{"cells":[{"language":"js","code":"1 + 1"}]}`)
	res := rawJSON(`{"content":[{"type":"text","text":"2"}],"details":{"cells":[{"index":0,"title":"js","language":"js","code":"1 + 1","status":"complete","output":"2\n","durationMs":0,"exitCode":0,"statusEvents":[],"markdown":""}],"language":"js","languages":["js"],"jsonOutputs":[],"images":[],"statusEvents":[],"meta":{},"isError":false}}`)
	b.ReportAllocs()
	c0 := processCPU()
	n := 0
	for b.Loop() {
		n++
		w.Hold()
		w.Write(tape.Deferred(tape.Record{Type: tape.TypeRequest, N: n}, req))
		w.Write(tape.Deferred(tape.Record{Type: tape.TypeResult, N: n}, res))
		w.Release()
		w.FlushSoon()
	}
	w.Close()
	b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
}
