package js_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/js"
)

// BenchmarkReserve is cells whose built-ins announce big allocations to the
// session's guard (reserve, memory.go) many times: an array's growth, and
// strings made and dropped (garbage, which reserve's upper bound of the
// session's growth counts until a walk shows it is not the session's), in a
// session that holds little and in one that holds half its limit in small
// objects (a walk of it costs tens of milliseconds). walks/op is the walks
// of sessions per cell.
func BenchmarkReserve(b *testing.B) {
	const limit = 128 << 20
	cases := []struct{ name, setup, code string }{
		{"array growth", "", "{ const a = []; for (let i = 0; i < 1e6; i++) a.push(i); a.length }"},
		{"strings dropped", "", "{ let n = 0; for (let i = 0; i < 50; i++) n += 'x'.repeat(2e6).length; n }"},
		{"strings dropped, half full", "globalThis.held = Array.from({ length: 1.5e5 }, (_, i) => ({ i }))",
			"{ let n = 0; for (let i = 0; i < 50; i++) n += 'x'.repeat(2e6).length; n }"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			inst, err := js.New().NewInstance(context.Background(), runtimes.InstanceOptions{Root: b.TempDir(), MemoryLimitBytes: limit})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { inst.Close(context.Background()) })
			if c.setup != "" {
				benchRun(b, inst, c.setup)
			}
			benchRun(b, inst, c.code)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			cpu, walks := threadCPU(), js.Walks()
			for range b.N {
				benchRun(b, inst, c.code)
			}
			b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(js.Walks()-walks)/float64(b.N), "walks/op")
		})
	}
}
