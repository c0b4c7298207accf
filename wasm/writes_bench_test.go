package wasm_test

import (
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/wasm"
)

// BenchmarkWrittenPages: a cell's worth of scattered writes (80 pages of a
// 20 MiB memory the guest owns), with write tracking: the writes' faults
// (write-ns/op), then the scan that lists them and protects them again
// (scan-ns/op); untracked is the writes alone.
func BenchmarkWrittenPages(b *testing.B) {
	for _, tracked := range []bool{false, true} {
		name := map[bool]string{false: "untracked", true: "tracked"}[tracked]
		b.Run(name, func(b *testing.B) {
			mod, h := instantiate(b, wasm.MemoryOptions{Limit: 64 << 20})
			mem := mod.Memory()
			mem.Grow(20<<20/65536 - 1)
			size := mem.Size()
			all, _ := mem.Read(0, size)
			for i := 0; i < len(all); i += 4096 {
				all[i] = 1
			}
			if tracked {
				if err := h.TrackWrites(size); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			var tw, ts time.Duration
			for b.Loop() {
				t0 := time.Now()
				for p := 0; p < 80; p++ {
					all[(p*61%5120)*4096+8]++
				}
				t1 := time.Now()
				if tracked {
					if d, err := h.WrittenPages(size); err != nil || len(d) != 80 {
						b.Fatal(len(d), err)
					}
					if err := h.ProtectAll(size); err != nil {
						b.Fatal(err)
					}
				}
				tw += t1.Sub(t0)
				ts += time.Since(t1)
			}
			b.ReportMetric(float64(tw.Nanoseconds())/float64(b.N), "write-ns/op")
			b.ReportMetric(float64(ts.Nanoseconds())/float64(b.N), "scan-ns/op")
		})
	}
}
