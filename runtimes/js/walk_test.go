package js

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestMeasureTracksTheHeap: a session's measured size follows the heap its
// data takes, for the shapes of data that matter.
func TestMeasureTracksTheHeap(t *testing.T) {
	tests := []struct{ name, code string }{
		{"big string", "globalThis.d = 'x'.repeat(40 << 20)"},
		{"unicode string", "globalThis.d = '\\u00e9'.repeat(20 << 20)"},
		{"array of numbers", "globalThis.d = Array.from({ length: 2e6 }, (_, i) => i * 1.5)"},
		{"array of objects", "globalThis.d = Array.from({ length: 3e5 }, (_, i) => ({ i, s: 'v' + i }))"},
		{"map", "globalThis.d = new Map(); for (let i = 0; i < 3e5; i++) d.set('k' + i, [i])"},
		{"substrings", "{ const s = 'y'.repeat(1 << 20); globalThis.d = Array.from({ length: 1000 }, (_, i) => s.slice(i)) }"},
		{"closures", "globalThis.d = Array.from({ length: 1e5 }, (_, i) => () => i)"},
		{"typed array", "globalThis.d = new Float64Array(4e6)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := (&Runtime{}).NewInstance(context.Background(), runtimes.InstanceOptions{MemoryLimitBytes: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Close(context.Background())
			in := inst.(*instance)
			before, _ := in.measure(0)
			live0 := liveHeap()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if out, err := in.Run(ctx, tt.code, nil); err != nil || out.Failed {
				t.Fatalf("Run: %+v %v", out, err)
			}
			grown := liveHeap() - live0
			start := time.Now()
			after, _ := in.measure(0)
			took := time.Since(start)
			measured := after - before
			t.Logf("heap grew %d KiB, measured %d KiB (%.2f), walk %v", grown>>10, measured>>10, float64(measured)/float64(grown), took)
			if measured < grown*7/10 || measured > grown*3/2 {
				t.Errorf("measured %d KiB for a heap growth of %d KiB", measured>>10, grown>>10)
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
