package python_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// BenchmarkPersistState: the cost of persisting a light session's Python
// state (a few globals set) after a light cell (x += 1), as after each
// eval: only the pages the cell changed are compressed, in a new frame.
// Reported: state-bytes (the frames the state is made of) and
// written-bytes (the new frames a store writes: only what changed).
func BenchmarkPersistState(b *testing.B) {
	inst, _ := newInstance(b)
	run(b, inst, "x = 42\nnames = [str(i) for i in range(1000)]")
	var cache python.StateCache
	_, frames := persist(b, inst, &cache)
	b.ReportAllocs()
	var state, written int
	for b.Loop() {
		// A light cell between persists, as after each eval.
		b.StopTimer()
		run(b, inst, "x += 1")
		inst.(*python.Instance).ResidentBytes() // the work between cells, done
		b.StartTimer()
		_, next := persist(b, inst, &cache)
		state = frameBytes(next)
		written += frameBytes(newFrames(frames, next))
		frames = next
	}
	b.ReportMetric(float64(state), "state-bytes")
	b.ReportMetric(float64(written)/float64(b.N), "written-bytes/op")
}

// BenchmarkRestoreState: the Python part of a resume: a light session's
// state (persisted after a few light cells, as a store holds it) restored
// over the template with the StateCache seeded, then the first persist
// after a light cell, which compresses only what that cell changed.
func BenchmarkRestoreState(b *testing.B) {
	r := runtimeForTest(b)
	inst, _ := newInstance(b)
	run(b, inst, "x = 42\nnames = [str(i) for i in range(1000)]")
	var cache python.StateCache
	for range 5 {
		run(b, inst, "x += 1")
		persist(b, inst, &cache)
	}
	index, frames := persist(b, inst, &cache)
	ctx := context.Background()
	b.Run("restore", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c python.StateCache
			cp, err := r.RestoreInstance(ctx, runtimes.InstanceOptions{Root: b.TempDir()}, index, frames, &c)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			cp.Close(ctx)
			b.StartTimer()
		}
	})
	b.Run("first-persist", func(b *testing.B) {
		b.ReportAllocs()
		var written int
		for b.Loop() {
			b.StopTimer()
			var c python.StateCache
			cp, err := r.RestoreInstance(ctx, runtimes.InstanceOptions{Root: b.TempDir()}, index, frames, &c)
			if err != nil {
				b.Fatal(err)
			}
			run(b, cp, "x += 1")
			b.StartTimer()
			_, next := persist(b, cp, &c)
			b.StopTimer()
			written += frameBytes(newFrames(frames, next))
			cp.Close(ctx)
			b.StartTimer()
		}
		b.ReportMetric(float64(written)/float64(b.N), "written-bytes/op")
	})
}
