package python_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
)

// TestPersistTracked: with checkpoints on, a persist after the first one
// through the same cache takes the changed pages from the checkpoint's
// write tracking instead of hashing every written page, and the state is
// the same either way: after each of a series of cells (small changes,
// megabytes allocated, then freed and given back, a cell that fails) the
// tracked state's pages are the memory's, byte for byte, and a persist
// by hashing (a new cache) at the same point holds the same pages. After
// the checkpoint is dropped (Trim), the next persist hashes, and is right
// too.
func TestPersistTracked(t *testing.T) {
	r := runtimeForTest(t)
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir(), Checkpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	check := func(step string, cache *python.StateCache, wantTracked bool) {
		t.Helper()
		index, frames := persist(t, inst, cache)
		// Without write tracking every persist hashes, and must still
		// hold the memory byte for byte.
		wantTracked = wantTracked && writeTracking()
		if got := python.PersistTrackedForTest(cache); got != wantTracked {
			t.Fatalf("%s: persist tracked = %v, want %v", step, got, wantTracked)
		}
		state, err := python.StatePagesForTest(inst, index, frames)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		mem, err := python.MemoryPagesForTest(inst)
		if err != nil {
			t.Fatal(err)
		}
		if err := samePages(state, mem); err != nil {
			t.Fatalf("%s: the persisted state is not the memory: %v", step, err)
		}
	}
	run(t, inst, "x = 0\nnames = [str(i) for i in range(1000)]")
	var cache python.StateCache
	check("first persist", &cache, false)
	for i, code := range []string{
		"x += 1",
		"big = bytearray(8 << 20)\nbig[::4096] = b'\\x01' * len(big[::4096])",
		"x += 1\nnames.append('more')",
		"del big\nimport gc; gc.collect()",
		"raise ValueError('a failing cell')",
		"d = {i: str(i) * 10 for i in range(20000)}",
		"d.clear()",
		"x += 1",
	} {
		run(t, inst, code)
		check(fmt.Sprintf("cell %d", i), &cache, true)
	}
	// The same point persisted by hashing (a new cache) holds the same
	// pages as the tracked persist did.
	run(t, inst, "x += 1")
	index, frames := persist(t, inst, &cache)
	if !python.PersistTrackedForTest(&cache) && writeTracking() {
		t.Fatal("the last persist was not tracked")
	}
	tracked, _ := python.StatePagesForTest(inst, index, frames)
	var fresh python.StateCache
	index2, frames2 := persist(t, inst, &fresh)
	if python.PersistTrackedForTest(&fresh) {
		t.Fatal("a persist through a new cache did not hash")
	}
	hashed, _ := python.StatePagesForTest(inst, index2, frames2)
	if err := samePages(tracked, hashed); err != nil {
		t.Fatalf("tracked and hashed states differ: %v", err)
	}
	// The checkpoint dropped: the next persist through the cache hashes.
	inst.(runtimes.Sizer).Trim(context.Background())
	run(t, inst, "x += 1")
	check("after Trim", &fresh, false)
	run(t, inst, "x += 1")
	check("after Trim, next cell", &fresh, true)
}

func samePages(a, b map[uint32]string) error {
	for p, v := range a {
		if w, ok := b[p]; !ok || w != v {
			return fmt.Errorf("page %d differs (in the second: %v)", p, ok)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			return fmt.Errorf("page %d is only in the second", p)
		}
	}
	return nil
}
