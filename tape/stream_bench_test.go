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
