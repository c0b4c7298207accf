package js

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// BenchmarkWalk: a walk of a session of some 80 MiB of mixed data (objects
// with string keys and numbers, short strings, a Map, closures), as reserve
// and the memory monitor walk one near its limit.
func BenchmarkWalk(b *testing.B) {
	freshSize()
	inst, err := (&Runtime{}).NewInstance(context.Background(), runtimes.InstanceOptions{MemoryLimitBytes: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	defer inst.Close(context.Background())
	in := inst.(*instance)
	out, err := in.Run(context.Background(), `globalThis.o = Array.from({ length: 5e4 }, (_, i) => ({ i, s: 'v' + i, f: i * 1.5 }));
globalThis.m = new Map(); for (let i = 0; i < 5e4; i++) m.set('k' + i, [i]);
globalThis.c = Array.from({ length: 2e4 }, (_, i) => () => i)`, nil)
	if err != nil || out.Failed {
		b.Fatalf("Run: %+v %v", out, err)
	}
	in.vmMu.Lock()
	defer in.vmMu.Unlock()
	b.ReportAllocs()
	var size int64
	for b.Loop() {
		size, _, _ = sizeOf(0, in.vmRoots()...)
	}
	b.ReportMetric(float64(size)/(1<<20), "MiB")
}
