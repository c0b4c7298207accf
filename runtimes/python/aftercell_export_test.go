package python

import "github.com/wasmeval/wasmeval/runtimes"

// AfterWorkForTest says how often inst's work between cells was done by
// the next use of the instance (inline) and by the timer, and whether
// some is pending now.
func AfterWorkForTest(inst runtimes.Instance) (inline, timed int, pending bool) {
	a := &inst.(*Instance).after
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inline, a.timed, a.pending
}
