package js

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestWalkWhileWeakEntriesDie: goja's WeakMap and WeakSet drop an entry
// whose key the garbage collector freed from a cleanup, on the runtime's
// cleanup goroutine, whatever the VM is doing. A walk of the session that
// iterated such a map then (at a cell's end, or the memory monitor's)
// met the cleanup's delete: "concurrent map iteration and map write", a
// fatal error no recover stops, which ended the process and every
// session in it (seen in CI, from a walk at a cell's end). A cell can
// make that happen at will: keys it lets go of, and a collection.
func TestWalkWhileWeakEntriesDie(t *testing.T) {
	freshSize()
	preludeGlobals()
	in, run := testInstance(t, 512<<20)
	run(`globalThis.wm = new WeakMap(); globalThis.ws = new WeakSet(); globalThis.kept = [];
for (let i = 0; i < 2e4; i++) { const k = {}; wm.set(k, [i]); ws.add(k); if (i % 4 === 0) kept.push(k) }`)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() { // the collector, running the entries' cleanups meanwhile
		defer close(done)
		for !stop.Load() {
			runtime.GC()
		}
	}()
	deadline := time.Now().Add(2 * time.Second)
	walks := 0
	for ; time.Now().Before(deadline); walks++ {
		in.vmMu.Lock()
		size := in.measureBetweenCells()
		in.vmMu.Unlock()
		if size <= 0 {
			t.Fatalf("walk %d measured %d bytes", walks, size)
		}
		run(`for (let i = 0; i < 5e3; i++) { const k = {}; wm.set(k, [i]); ws.add(k) }`) // more keys to die
	}
	stop.Store(true)
	<-done
	t.Logf("%d walks", walks)

	// What the entries hold still counts: a value kept by a live key.
	run(`wm.set(kept[0], 'w'.repeat(16 << 20)); ws.add(kept[1])`)
	in.vmMu.Lock()
	size := in.measureBetweenCells()
	in.vmMu.Unlock()
	if size < 16<<20 {
		t.Fatalf("with a WeakMap value of 16 MiB the session measures %d bytes", size)
	}
}
