package python_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes/python"
)

// BenchmarkPersistState: the cost of persisting a light session's Python
// state (a few globals set): the pages written over the template,
// compressed, a light cell run between two persists (only the groups it
// changed are compressed again). Reported: the state's size.
func BenchmarkPersistState(b *testing.B) {
	inst, _ := newInstance(b)
	run(b, inst, "x = 42\nnames = [str(i) for i in range(1000)]")
	p := inst.(interface {
		PersistState(context.Context, *python.StateCache) ([]byte, error)
	})
	var cache python.StateCache
	b.ReportAllocs()
	var n int
	for b.Loop() {
		// A light cell between persists, as after each eval.
		b.StopTimer()
		run(b, inst, "x += 1")
		inst.(*python.Instance).ResidentBytes() // the work between cells, done
		b.StartTimer()
		s, err := p.PersistState(context.Background(), &cache)
		if err != nil {
			b.Fatal(err)
		}
		n = len(s)
	}
	b.ReportMetric(float64(n), "state-bytes")
}
