package fuel_test

import (
	"testing"

	"github.com/wasmeval/wasmeval/wasm/fuel"
)

func BenchmarkInstrument(b *testing.B) {
	b.Run("opcodes", func(b *testing.B) {
		benchmarkInstrument(b, opcodeModule, fuel.Options{})
	})
	b.Run("python", func(b *testing.B) {
		bin, _ := pythonArtifact(b)
		benchmarkInstrument(b, bin, fuel.Options{AddImport: true})
	})
}

func benchmarkInstrument(b *testing.B, bin []byte, opts fuel.Options) {
	b.ReportAllocs()
	b.SetBytes(int64(len(bin)))
	for b.Loop() {
		if _, err := fuel.Instrument(bin, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPythonCell measures the run-time cost of the checks: the same
// CPU-bound cell in plain and instrumented CPython (the hook refills
// 10_000_000 units per call).
func BenchmarkPythonCell(b *testing.B) {
	const cell = "sum(i * i for i in range(100000))"
	for _, tc := range []struct {
		name       string
		instrument bool
	}{{"plain", false}, {"fuel", true}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			rt, cm, stdlib, prelude := pythonRuntime(b, tc.instrument)
			g := newPython(b, rt, cm, stdlib, prelude, 10_000_000, 1<<40)
			calls := g.mt.calls.Load() // those of the initialisation
			for b.Loop() {
				if rc, out, err := g.run(cell); err != nil || rc != 0 {
					b.Fatalf("rc=%d err=%v %q", rc, err, out)
				}
			}
			b.ReportMetric(float64(g.mt.calls.Load()-calls)/float64(b.N), "hooks/op")
		})
	}
}
