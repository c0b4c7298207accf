package python_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// BenchmarkPersistState: the cost of persisting a light session's Python
// state (a few globals set) after a light cell (x += 1), as after each
// eval: only the pages the cell changed are compressed, in a new frame.
// Reported: cpu-ms/persist (the process's CPU time per persist; on a
// loaded machine wall time is mostly waiting for a core), state-bytes
// (the frames the state is made of) and written-bytes/op (the new frames
// a store writes: only what changed).
func BenchmarkPersistState(b *testing.B) {
	inst, _ := newInstance(b)
	run(b, inst, "x = 42\nnames = [str(i) for i in range(1000)]")
	var cache python.StateCache
	_, frames := persist(b, inst, &cache)
	b.ReportAllocs()
	var state, written int
	var cpu time.Duration
	for b.Loop() {
		// A light cell between persists, as after each eval.
		b.StopTimer()
		run(b, inst, "x += 1")
		inst.(*python.Instance).AtRest() // the work between cells, done
		b.StartTimer()
		cpu0 := cpuTime()
		_, next := persist(b, inst, &cache)
		cpu += cpuTime() - cpu0
		state = frameBytes(next)
		written += frameBytes(newFrames(frames, next))
		frames = next
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/persist")
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
		var cpu time.Duration
		for b.Loop() {
			var c python.StateCache
			cpu0 := cpuTime()
			cp, err := r.RestoreInstance(ctx, runtimes.InstanceOptions{Root: b.TempDir()}, index, frames, &c)
			if err != nil {
				b.Fatal(err)
			}
			cpu += cpuTime() - cpu0
			b.StopTimer()
			cp.Close(ctx)
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/restore")
	})
	b.Run("first-persist", func(b *testing.B) {
		b.ReportAllocs()
		var written int
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			var c python.StateCache
			cp, err := r.RestoreInstance(ctx, runtimes.InstanceOptions{Root: b.TempDir()}, index, frames, &c)
			if err != nil {
				b.Fatal(err)
			}
			run(b, cp, "x += 1")
			cp.(*python.Instance).AtRest()
			b.StartTimer()
			cpu0 := cpuTime()
			_, next := persist(b, cp, &c)
			cpu += cpuTime() - cpu0
			b.StopTimer()
			written += frameBytes(newFrames(frames, next))
			cp.Close(ctx)
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/persist")
		b.ReportMetric(float64(written)/float64(b.N), "written-bytes/op")
	})
}

// cpuTime is the process's user and system CPU time so far. The restore
// above runs its setup on the process's other goroutines too, which count.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
