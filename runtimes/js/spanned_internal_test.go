package js

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestGrowthAcrossACollectionNotCountedTwice: a cell that grows its
// session while a collection ends in its middle leaves the growth after
// that collection both in the session's measured size and out of the live
// heap the collection left; the next cell's live-heap baseline must not
// then count it a second time once another collection shows it. Before
// the fix the next cell, which grows the session from 58 to 61 MiB of 64
// and then computes without a safe point while a collection ends, was
// stopped for "about 70 MiB" (the memory monitor's estimate for a silent
// cell) in most runs, and the release after the failure let go of the
// session's 61 MiB array; TestReleaseGrownJustUnderLimit met it about 1
// run in 10, whenever the runtime's own collection fell so.
func TestGrowthAcrossACollectionNotCountedTwice(t *testing.T) {
	in, run := collectingInstance(t, 64<<20)
	run("var a = []")
	run("for (let i = 0; i < 58; i++) { a.push(String(i).padEnd(1 << 20, 'x')); if (i === 20) collect() }")
	growThenCompute(t, in, 3, "a cell that grew the session from 58 to 61 MiB of 64")
	run("if (a.length !== 61) throw new Error('a has ' + a.length)")
}

// TestGrowthAcrossACollectionKeptUntilNearTheLimit: the growth measured
// across a collection counts twice against any later cell until another
// collection ends, not only against the next one: a first cell that grows
// the session to 20 MiB of 64 across a collection leaves room, but once a
// second cell (with no collection in it) brings it to 32 MiB, a third that
// grows 20 more and computes while a collection ends was judged at about
// 65-67 MiB in most runs. The runtime's own collections are off, so that
// collect() and the memory monitor end them.
func TestGrowthAcrossACollectionKeptUntilNearTheLimit(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	in, run := collectingInstance(t, 64<<20)
	run("var a = []")
	run("for (let i = 0; i < 20; i++) { a.push(String(i).padEnd(1 << 20, 'x')); if (i === 1) collect() }")
	run("for (let i = 0; i < 12; i++) a.push(String(i).padEnd(1 << 20, 'y'))")
	growThenCompute(t, in, 20, "a cell that grew the session from 32 to 52 MiB of 64")
	run("if (a.length !== 52) throw new Error('a has ' + a.length)")
}

// collectingInstance is testInstance with collect(), a plain Go function
// that runs a collection: it is no safe point, where a cell would measure
// itself when the memory monitor asks.
func collectingInstance(t *testing.T, limit int64) (*instance, func(code string)) {
	t.Helper()
	in, run := testInstance(t, limit)
	if err := in.vm.Set("collect", func() { runtime.GC() }); err != nil {
		t.Fatal(err)
	}
	return in, run
}

// growThenCompute runs a cell that grows the global array a by mib MiB,
// ends a collection, and then computes for 150 ms without a safe point,
// so that the memory monitor judges it as a silent cell by the live heap;
// the test fails, with what the cell printed, if the cell fails.
func growThenCompute(t *testing.T, in *instance, mib int, what string) {
	t.Helper()
	var sink stderrSink
	code := fmt.Sprintf(`for (let i = 0; i < %d; i++) a.push(String(i).padEnd(1 << 20, 'z'))
collect()
const until = Date.now() + 150
let spins = 0
while (Date.now() < until) spins++`, mib)
	if out, err := in.Run(context.Background(), code, &sink); err != nil || out.Failed {
		t.Fatalf("%s failed: %+v %v\n%s", what, out, err, sink.String())
	}
}
