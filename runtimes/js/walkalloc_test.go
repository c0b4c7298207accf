package js

import (
	"runtime"
	"testing"
)

// TestWalkOfBigMapsAllocatesLittle: a walk of a session holding a big Map
// and a big Set allocates little beside the session. goja's Map and Set
// keep their entries in a linked list, and the walk went down it entry by
// entry with each entry's other fields left on its stack: a session of a
// million-entry Map (87 MiB) took a walk of 241 MiB, and walks run when a
// session is at its limit (walk.go).
func TestWalkOfBigMapsAllocatesLittle(t *testing.T) {
	freshSize()
	for _, tt := range []struct{ name, code string }{
		{"map", "globalThis.d = new Map(); for (let i = 0; i < 1e5; i++) d.set(i, [i])"},
		{"set", "globalThis.d = new Set(); for (let i = 0; i < 3e5; i++) d.add('k' + i)"},
		{"map and set", "globalThis.m = new Map(); globalThis.s = new Set(); for (let i = 0; i < 5e4; i++) { m.set('k' + i, { i }); s.add([i]) }"},
		{"map of maps", "globalThis.d = new Map(); for (let i = 0; i < 1e3; i++) { const m = new Map(); for (let j = 0; j < 300; j++) m.set(j, j); d.set(i, m) }"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, run := testInstance(t, 1<<30)
			run(tt.code)
			in.vmMu.Lock()
			defer in.vmMu.Unlock()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			size, over, failed := sizeOf(0, in.vmRoots()...)
			runtime.ReadMemStats(&after)
			if over || failed {
				t.Fatalf("walk over %v, failed %v", over, failed)
			}
			took := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("session %d KiB, its walk allocated %d KiB", size>>10, took>>10)
			if size < 8<<20 {
				t.Fatalf("the session measures %d KiB: too small to judge the walk by", size>>10)
			}
			if took > size/4 {
				t.Errorf("a walk of a session of %d KiB allocated %d KiB", size>>10, took>>10)
			}
		})
	}
}
