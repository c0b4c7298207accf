package python

import "github.com/wasmeval/wasmeval/runtimes"

// SizeBoundForTest is inst's SizeBound, and whether the work between
// cells was pending all through the call (so the bound had to cover the
// checkpoint's take as well).
func SizeBoundForTest(inst runtimes.Instance) (n int64, pending bool) {
	in := inst.(*Instance)
	isPending := func() bool {
		in.after.mu.Lock()
		defer in.after.mu.Unlock()
		return in.after.pending
	}
	before := isPending()
	n, _ = in.SizeBound()
	return n, before && isPending() // pending only ever ends before a new cell
}
