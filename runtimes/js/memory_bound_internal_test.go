package js

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestGrownSinceCountsWhatFollowsACollection: heapMark.grownSince is an
// upper bound of a session's growth since a measurement, which reserve's
// fast path trusts. It returned the live heap's growth whenever a
// collection had ended since the mark: the live heap is as of the end of
// that collection, so what was allocated after it (64 MiB here, kept) was
// not counted, and a big allocation just after a collection passed the
// fast path on a session already over its limit.
func TestGrownSinceCountsWhatFollowsACollection(t *testing.T) {
	// No collection of its own while the test allocates: the one below is
	// the last before the reading.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	m := markNow()
	runtime.GC()
	const size = 64 << 20
	kept := make([][]byte, 0, size>>16)
	for range size >> 16 {
		kept = append(kept, make([]byte, 1<<16))
	}
	now := markNow()
	if now.cycles == m.cycles {
		t.Fatalf("no collection ended between the mark and now (cycles %d)", m.cycles)
	}
	if got := m.grownSince(now); got < size {
		t.Errorf("grownSince = %d MiB after %d MiB were allocated and kept after a collection, want at least that",
			got>>20, size>>20)
	}
	runtime.KeepAlive(kept)
}

// TestGrownSinceCountsWhatOthersFreed: the growth is not hidden by garbage
// that something else lets go of meanwhile (another session's, or the
// garbage a collection leaves for the sweeper): the heap then holds no more
// than at the mark, while the session holds 32 MiB more.
func TestGrownSinceCountsWhatOthersFreed(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const size = 32 << 20
	other := make([][]byte, 0, size>>16)
	for range size >> 16 {
		other = append(other, make([]byte, 1<<16))
	}
	runtime.GC()
	m := markNow()
	runtime.KeepAlive(other)
	runtime.GC() // the other's data is freed
	kept := make([][]byte, 0, size>>16)
	for range size >> 16 {
		kept = append(kept, make([]byte, 1<<16))
	}
	runtime.GC() // and the live heap shows the session's
	now := markNow()
	if got := m.grownSince(now); got < size {
		t.Errorf("grownSince = %d MiB after %d MiB were kept while as much was freed, want at least that",
			got>>20, size>>20)
	}
	runtime.KeepAlive(kept)
}
