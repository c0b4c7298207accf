package js

import (
	"runtime/metrics"
	"sync/atomic"
)

// A session's size without walking it.
//
// A walk of a session's VM (walk.go) costs milliseconds even for a session
// that holds next to nothing (some 12 ms for a fresh VM's 3 MB of
// built-ins), so a server's memory budget cannot walk every session after
// every cell. It does not need to: a session's VM changes only while a cell
// runs in it (nothing of a cell outlives it: no timer, no promise job), and
// it can grow by no more than what is allocated while the cell runs. So
// each instance keeps an upper bound of its size: its last complete walk,
// plus the bytes the whole process allocated (the Go runtime's cumulative
// /gc/heap/allocs:bytes, which a collection never lowers, unlike the live
// heap) while its cells ran since. A walk sets the bound to what it found;
// a cell's end adds what was allocated since its start or since a walk
// within it. The bound is loose (it counts every goroutine's allocations,
// garbage included), never low; and while no cell has run since the last
// walk, it is that walk's size exactly, which ResidentBytes returns
// without walking again.

// allocatedBytes is the bytes the process has allocated on its heap so far.
func allocatedBytes() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() == metrics.KindUint64 {
		return s[0].Value.Uint64()
	}
	return 0
}

// sizeBound is an instance's upper bound of its size (beyond a fresh
// VM's). Its plain fields belong to the goroutine that owns the VM (the
// one holding vmMu); bound and clean are read by anyone.
type sizeBound struct {
	base    int64  // the size the last complete walk found
	added   int64  // bytes allocated while cells ran since that walk
	mark    uint64 // allocatedBytes when the running cell started, or was last walked
	running bool
	bound   atomic.Int64 // base + added, as of the last cell's end or walk
	clean   atomic.Bool  // no cell has run since the last walk: bound is its size
}

// cellStarted starts counting what the cell about to run allocates. The
// caller holds vmMu.
func (b *sizeBound) cellStarted() {
	b.clean.Store(false)
	b.running = true
	b.mark = allocatedBytes()
}

// cellEnded adds what was allocated since the cell started (or was last
// walked) to the bound. The caller holds vmMu.
func (b *sizeBound) cellEnded() {
	if !b.running {
		return
	}
	b.running = false
	b.added += int64(allocatedBytes() - b.mark)
	b.bound.Store(b.base + b.added)
}

// grown is what the session may have grown by since its last walk: the
// bytes allocated while its cells ran, the running one's so far included.
// The caller holds vmMu.
func (b *sizeBound) grown() int64 {
	g := b.added
	if b.running {
		g += int64(allocatedBytes() - b.mark)
	}
	return g
}

// walked records a complete walk that found size, taken by the goroutine
// that owns the VM: between cells, or within a cell at a safe point or
// while it waits. What the cell allocates after it is counted from now.
func (b *sizeBound) walked(size int64) {
	walks.Add(1)
	b.base, b.added = size, 0
	if b.running {
		b.mark = allocatedBytes()
	} else {
		b.clean.Store(true)
	}
	b.bound.Store(size)
}

// walks counts the complete walks of sessions (and the fresh starts of
// their VMs, which count as walks of size 0), for tests.
var walks atomic.Int64

// Walks is how many complete walks of sessions' VMs the process has made
// (and fresh starts of VMs, which count as walks of size 0): each costs
// milliseconds, so a server should make few.
func Walks() int64 { return walks.Load() }

// SizeBound is an upper bound of the host memory the instance holds (what
// ResidentBytes would return), known without walking its VM: its last
// walk plus what the process allocated while its cells ran since. exact
// reports that no cell has run since that walk, so the bound is its size.
// Call it between cells; it is safe to call at any time.
func (in *instance) SizeBound() (n int64, exact bool) {
	return in.bound.bound.Load() + freshSize(), in.bound.clean.Load()
}
