package sandbox

import (
	"io"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/tape"
)

// BenchmarkRecordedClockRead is the cost of a recorded wall clock read
// (recordedClocks): "one instance" the usual case, a lock and the clock
// record; "alternating" instances that take turns at each read, a reader
// record too; "unattributed" the recorder before instances had their own
// reads (the clock record alone), to compare.
func BenchmarkRecordedClockRead(b *testing.B) {
	base := func(string) clocks { return clocks{now: time.Now, nanotime: func() int64 { return 0 }} }
	newWriter := func(b *testing.B) *tape.Writer {
		w, err := tape.NewWriter(io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { w.Close() })
		return w
	}
	b.Run("one instance", func(b *testing.B) {
		now := recordedClocks(newWriter(b), base)("py").now
		b.ReportAllocs()
		for b.Loop() {
			now()
		}
	})
	b.Run("alternating", func(b *testing.B) {
		of := recordedClocks(newWriter(b), base)
		py, js := of("py").now, of("js").now
		b.ReportAllocs()
		for b.Loop() {
			py()
			js()
		}
	})
	b.Run("unattributed", func(b *testing.B) {
		w := newWriter(b)
		b.ReportAllocs()
		for b.Loop() {
			t := time.Now().Round(0)
			ns := t.UnixNano()
			w.Write(tape.Record{Type: tape.TypeClock, Clock: tape.ClockWall, NS: &ns})
		}
	})
}
