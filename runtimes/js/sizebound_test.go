package js

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestSizeBoundCoversGrowth: after a cell, an instance's size bound, known
// without walking, is at least what a walk then finds, for the shapes of
// data TestMeasureTracksTheHeap walks, though collections run all through
// the cells (a collection in the middle of a cell hid its growth from an
// estimate by the live heap). Once a walk has measured the idle session,
// ResidentBytes answers without walking again until a cell runs.
func TestSizeBoundCoversGrowth(t *testing.T) {
	stop := make(chan struct{})
	gcs := make(chan struct{})
	go func() { // collections all through the cells
		defer close(gcs)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
				time.Sleep(10 * time.Millisecond)
			}
		}
	}()
	defer func() { close(stop); <-gcs }()
	tests := []struct{ name, code string }{
		{"big string", "globalThis.d = 'x'.repeat(20 << 20)"},
		{"array of objects", "globalThis.d = Array.from({ length: 5e4 }, (_, i) => ({ i, s: 'v' + i }))"},
		{"map", "globalThis.d = new Map(); for (let i = 0; i < 5e4; i++) d.set('k' + i, [i])"},
		{"closures", "globalThis.d = Array.from({ length: 3e4 }, (_, i) => () => i)"},
		{"typed array", "globalThis.d = new Float64Array(2e6)"},
		{"timer", "globalThis.d = []; await new Promise(r => setTimeout(() => { for (let i = 0; i < 5e4; i++) d.push({ i }); r() }, 50))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, run := testInstance(t, 1<<30)
			run("globalThis.before = 1")
			in.ResidentBytes() // a walk: the bound starts from the session's size
			run(tt.code)
			bound, exact := in.SizeBound()
			if exact {
				t.Error("the bound after a cell says it is exact")
			}
			w0 := walks.Load()
			size := in.ResidentBytes()
			if walks.Load() != w0+1 {
				t.Fatalf("ResidentBytes after a cell walked %d times, want once", walks.Load()-w0)
			}
			t.Logf("bound %d KiB, walked %d KiB", bound>>10, size>>10)
			if bound < size || size < 2<<20 {
				t.Errorf("the bound after the cell is %d KiB, the walk finds %d KiB: it undercounts", bound>>10, size>>10)
			}
			// Measured and unchanged since: exact, and not walked again.
			if b, exact := in.SizeBound(); !exact || b != size {
				t.Errorf("after the walk the bound is %d (exact %v), want %d exactly", b, exact, size)
			}
			if again := in.ResidentBytes(); again != size || walks.Load() != w0+1 {
				t.Errorf("ResidentBytes of the unchanged session: %d after %d walks, want %d without walking", again, walks.Load()-w0-1, size)
			}
			// A cell that adds nothing keeps the bound above the size.
			run("globalThis.before++")
			if b, exact := in.SizeBound(); exact || b < size {
				t.Errorf("after a cell that added nothing the bound is %d (exact %v), below the walked size %d", b, exact, size)
			}
		})
	}
}

// TestCellEndWalksOnlyPastBound: a cell's end does not walk its session
// while what the session may have grown by (what was allocated while its
// cells ran since its last walk) keeps it well within its limit, however
// much the rest of the process grew meanwhile (the estimate by the heap
// walked then: with 100 sessions at work, a quarter of serve's CPU); a
// cell that grows its session past that tolerance is walked at its end.
func TestCellEndWalksOnlyPastBound(t *testing.T) {
	in, run := testInstance(t, 256<<20)
	run("globalThis.x = 1")
	in.ResidentBytes()
	// The process (not the session) grows by 96 MiB.
	junk := make([][]byte, 96)
	for i := range junk {
		junk[i] = make([]byte, 1<<20)
		junk[i][0] = 1
	}
	w0 := walks.Load()
	for range 5 {
		run("x++")
	}
	if n := walks.Load() - w0; n != 0 {
		t.Errorf("five small cells walked their session %d times while the rest of the process grew", n)
	}
	runtime.KeepAlive(junk)
	w0 = walks.Load()
	run("globalThis.big = 'q'.repeat(48 << 20)")
	if n := walks.Load() - w0; n != 1 {
		t.Errorf("a cell that grew its session by 48 MiB was walked %d times at its end, want once", n)
	}
}

// testInstance is a new instance with a memory limit of limit bytes, closed
// when the test ends, and a function that runs a cell in it (a minute at
// most) and fails the test when the cell fails.
func testInstance(t *testing.T, limit int64) (*instance, func(code string)) {
	t.Helper()
	inst, err := (&Runtime{}).NewInstance(context.Background(), runtimes.InstanceOptions{MemoryLimitBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(context.Background()) })
	in := inst.(*instance)
	return in, func(code string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := in.Run(ctx, code, nil); err != nil || out.Failed {
			t.Fatalf("Run: %+v %v", out, err)
		}
	}
}
