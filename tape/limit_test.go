package tape_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/wasmeval/wasmeval/tape"
)

// TestWriterLimit: a Writer with a limit writes records until the next
// would take the tape past it, then ends its frame and fails every call
// with ErrLimit; the tape it wrote is no longer than the limit (and a
// frame's end), reads back whole, and holds every record written before
// the refusal, in order, through deferred records, flushes and a drain
// (SetLimit: a guest's recorded random bytes must not fill the disk).
func TestWriterLimit(t *testing.T) {
	for _, limit := range []int64{2 << 10, 64 << 10, 1 << 20} {
		var buf bytes.Buffer
		w, err := tape.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w.SetLimit(limit)
		if err := w.Write(header()); err != nil {
			t.Fatal(err)
		}
		// Incompressible bytes, so the tape grows as fast as the records.
		data := make([]byte, 512)
		written, refused := 0, error(nil)
		for i := 0; i < 100000 && refused == nil; i++ {
			for j := range data {
				data[j] = byte(i*7919 + j*104729 + (i*j)%251)
			}
			var r tape.Record
			switch i % 4 {
			case 0, 1:
				r = tape.Record{Type: tape.TypeRand, Data: append([]byte(nil), data...)}
			case 2:
				r = tape.Deferred(tape.Record{Type: tape.TypeRequest, N: i}, map[string]int{"i": i})
			default:
				r = tape.Deferred(tape.Record{Type: tape.TypeResult, N: i - 1}, map[string]int{"i": i})
			}
			if refused = w.Write(r); refused == nil {
				written++
			}
			if i%50 == 49 && refused == nil {
				refused = w.Flush()
			}
		}
		if refused == nil {
			refused = w.Flush()
		}
		if !errors.Is(refused, tape.ErrLimit) {
			t.Fatalf("limit %d: writing past it: %v; want ErrLimit", limit, refused)
		}
		if err := w.Write(tape.Record{Type: tape.TypeRand, Data: []byte{1}}); !errors.Is(err, tape.ErrLimit) {
			t.Errorf("limit %d: a write after the limit: %v; want ErrLimit", limit, err)
		}
		if err := w.Close(); !errors.Is(err, tape.ErrLimit) {
			t.Errorf("limit %d: Close: %v; want ErrLimit", limit, err)
		}
		if n := int64(buf.Len()); n > limit+64 {
			t.Errorf("limit %d: the tape is %d bytes", limit, n)
		}
		if c := w.Complete(); c != int64(buf.Len()) {
			t.Errorf("limit %d: Complete = %d, the tape %d bytes: it should end with a whole frame", limit, c, buf.Len())
		}
		got, err := tape.Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("limit %d: the tape cut at its limit does not read: %v", limit, err)
		}
		// The records a refused Write took in are the deferred ones a later
		// drain found past the limit: the tape holds a prefix of what was
		// written, in order, and at least the records up to the last
		// successful Flush.
		if len(got.Events) > written || len(got.Events) == 0 {
			t.Fatalf("limit %d: %d events read back, %d written", limit, len(got.Events), written)
		}
		for i, r := range got.Events {
			want := [...]string{tape.TypeRand, tape.TypeRand, tape.TypeRequest, tape.TypeResult}[i%4]
			if r.Type != want {
				t.Fatalf("limit %d: event %d is a %s; want %s (the records came back out of order)", limit, i, r.Type, want)
			}
		}
		t.Logf("limit %d: %d records written, %d read back from %d bytes", limit, written, len(got.Events), buf.Len())
	}
}
