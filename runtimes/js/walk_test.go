package js

import (
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"
)

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestMeasureTracksTheHeap: a session's measured size follows the live
// heap its data takes, within a few per cent, for the shapes of data a cell
// can make. A walk is what reserve and the memory monitor hold against the
// session's limit: what it misses is room a cell has past its cap. It
// counted three quarters of an array of numbers (each boxed number takes
// a 16-byte tiny block), nine tenths of a Map or Set (a Go map's tables are
// 7/16 to 7/8 full) and of an object of many keys, and over twice the heap
// of small typed arrays (empty Go maps counted as eight slots).
func TestMeasureTracksTheHeap(t *testing.T) {
	freshSize()
	preludeGlobals()
	tests := []struct{ name, code string }{
		{"object of many keys", "globalThis.d = {}; for (let i = 0; i < 3e5; i++) d['k' + i] = i"},
		{"small objects", "globalThis.d = Array.from({ length: 2e5 }, (_, i) => ({ a: i, b: i + 1 }))"},
		{"array of ints", "globalThis.d = Array.from({ length: 2e6 }, (_, i) => i)"},
		{"array of floats", "globalThis.d = Array.from({ length: 2e6 }, (_, i) => i * 1.5)"},
		{"array of arrays", "globalThis.d = Array.from({ length: 1e5 }, (_, i) => [i])"},
		{"ascii string", "globalThis.d = 'x'.repeat(40 << 20)"},
		{"utf16 string", "globalThis.d = '\\u00e9'.repeat(20 << 20)"},
		{"short strings", "globalThis.d = Array.from({ length: 3e5 }, (_, i) => 'k' + i)"},
		{"short utf16 strings", "globalThis.d = Array.from({ length: 3e5 }, (_, i) => '\\u00e9' + i)"},
		{"concatenated", "globalThis.d = []; { let s = ''; for (let i = 0; i < 2e4; i++) { s += 'abcdefghij'; if (i % 100 === 0) d.push(s) } }"},
		{"substrings", "{ const s = 'y'.repeat(1 << 20); globalThis.d = Array.from({ length: 1000 }, (_, i) => s.slice(i)) }"},
		{"map", "globalThis.d = new Map(); for (let i = 0; i < 3e5; i++) d.set(i, i)"},
		{"map of strings to arrays", "globalThis.d = new Map(); for (let i = 0; i < 2e5; i++) d.set('k' + i, [i])"},
		{"set", "globalThis.d = new Set(); for (let i = 0; i < 3e5; i++) d.add(i)"},
		{"weakmap", "globalThis.k = Array.from({ length: 2e5 }, () => ({})); globalThis.d = new WeakMap(); for (const x of k) d.set(x, 1)"},
		{"weakset of arrays", "globalThis.k = Array.from({ length: 2e5 }, (_, i) => [i]); globalThis.d = new WeakSet(); for (const x of k) d.add(x)"},
		{"typed array", "globalThis.d = new Float64Array(4e6)"},
		{"small typed arrays", "globalThis.d = Array.from({ length: 1e5 }, () => new Uint8Array(16))"},
		{"array buffers", "globalThis.d = Array.from({ length: 1e5 }, () => new ArrayBuffer(64))"},
		{"closures", "globalThis.d = Array.from({ length: 1e5 }, (_, i) => () => i)"},
		{"bigints", "globalThis.d = Array.from({ length: 2e5 }, (_, i) => BigInt(i) ** 5n)"},
		{"symbols", "globalThis.d = Array.from({ length: 2e5 }, (_, i) => Symbol('s' + i))"},
		{"proxies", "globalThis.d = Array.from({ length: 1e5 }, () => new Proxy({}, {}))"},
		{"class instances", "class C { constructor(i) { this.a = i; this.b = i; this.c = i; this.d = i; this.e = i; this.f = i; this.g = i; this.h = i; this.i = i; this.j = i; this.k = i; this.l = i } }; globalThis.d = Array.from({ length: 1e5 }, (_, i) => new C(i))"},
		{"deleted properties", "globalThis.d = Array.from({ length: 1e5 }, (_, i) => { const o = { a: i, b: i, c: i, d: i, e: i, f: i }; delete o.b; delete o.d; return o })"},
		{"sparse array", "globalThis.d = []; for (let i = 0; i < 3e5; i++) d[i * 1000] = i"},
		{"sparse arrays", "globalThis.d = Array.from({ length: 2e4 }, (_, i) => { const a = []; a[1000 + i] = i; return a })"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, run := testInstance(t, 1<<30)
			run("1")
			in.vmMu.Lock()
			before, _ := in.measure(0)
			in.vmMu.Unlock()
			live0 := liveHeap()
			run(tt.code)
			grown := liveHeap() - live0
			in.vmMu.Lock()
			start := time.Now()
			after, _ := in.measure(0)
			took := time.Since(start)
			in.vmMu.Unlock()
			measured := after - before
			t.Logf("heap grew %d KiB, measured %d KiB (%.3f), walk %v", grown>>10, measured>>10, float64(measured)/float64(grown), took)
			if measured < grown*95/100 || measured > grown*112/100 {
				t.Errorf("measured %d KiB for a heap growth of %d KiB (%.3f; want 0.95 to 1.12)", measured>>10, grown>>10, float64(measured)/float64(grown))
			}
			runtime.KeepAlive(in)
		})
	}
}

// TestMarks: the walk's bitmap counts each word once, across its pages'
// edges, and clear lets a range be counted again.
func TestMarks(t *testing.T) {
	var m marks
	const page = 1 << markPageShift
	base := uintptr(7 * page)
	for _, c := range []struct {
		name       string
		p, n, want uintptr
	}{
		{"one word", base, 8, 1},
		{"the same word", base + 4, 2, 0},
		{"a struct around it", base, 24, 2},
		{"across a page's edge", base + page - 16, 40, 5},
		{"overlapping that", base + page - 8, 16, 0},
		{"a long range", base + 3*page + 8, 2*page + 8, 2*page/8 + 1},
		{"unaligned", base + 5*page + 4, 8, 0},
		{"a byte", base + 9*page + 3, 1, 1},
	} {
		if got := m.mark(c.p, c.n); got != c.want {
			t.Errorf("%s: mark(%#x, %d) = %d words, want %d", c.name, c.p, c.n, got, c.want)
		}
	}
	m.clear(base+8, 8)
	if got := m.mark(base, 24); got != 1 {
		t.Errorf("after clear: %d fresh words, want 1", got)
	}
	if got := words(base+4, 8); got != 2 {
		t.Errorf("words(unaligned 8 bytes) = %d, want 2", got)
	}
}

// TestAllocSize: allocSize rounds as the Go allocator does, by its tables
// of size classes.
func TestAllocSize(t *testing.T) {
	for _, c := range []struct {
		n        int64
		pointers bool
		want     int64
	}{
		{0, false, 0}, {1, false, 16}, {8, false, 16}, {15, false, 16}, {8, true, 8}, {9, true, 16},
		{16, false, 16}, {17, false, 24}, {33, true, 48}, {1024, true, 1024}, {1025, true, 1152},
		{1152, true, 1152}, {3073, false, 3200}, {32767, true, 32768}, {32768, true, 32768},
		{32769, true, 40960}, {1 << 20, false, 1 << 20},
	} {
		if got := allocSize(c.n, c.pointers); got != c.want {
			t.Errorf("allocSize(%d, %v) = %d, want %d", c.n, c.pointers, got, c.want)
		}
	}
	for n := int64(1); n <= 32768; n++ {
		i, _ := slices.BinarySearch(sizeClasses[:], uint16(n))
		if got := allocSize(n, true); got != int64(sizeClasses[i]) {
			t.Fatalf("allocSize(%d) = %d, its size class is %d", n, got, sizeClasses[i])
		}
	}
}
