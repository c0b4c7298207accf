package js

import (
	"context"

	"github.com/wasmeval/wasmeval/runtimes"
)

var _ runtimes.Sizer = (*instance)(nil)

// ResidentBytes implements runtimes.Sizer, so that a server's memory
// budget (sandbox.ManagerOptions.MemoryBudgetBytes) counts JavaScript
// sessions too: the session's size, walked now (walk.go) unless no cell
// has run since its last walk (sizebound.go: then that walk's size is
// its size), plus what a fresh VM holds. The size after a cell is not
// enough: a cell's end walks only when the process's heap grew, which
// other sessions' collections can hide.
func (in *instance) ResidentBytes() int64 {
	// vmMu is free while idle; one held anyway (a cell's goroutine stuck
	// in native code) must not stall the caller (the manager's sweep):
	// count the session at its limit.
	if !in.vmMu.TryLock() {
		return max(in.memLimit, 0) + freshSize()
	}
	defer in.vmMu.Unlock()
	if in.vm != nil && !in.bound.clean.Load() {
		now := markNow()
		in.setSize(in.measureBetweenCells(), now)
	}
	return in.size + freshSize()
}

// Trim implements runtimes.Sizer. A goja VM has nothing to give back
// without changing what the guest sees (its objects live on the Go heap,
// which the collector returns), so it only reports ResidentBytes.
func (in *instance) Trim(context.Context) int64 { return in.ResidentBytes() }
