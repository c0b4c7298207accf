package python

import (
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

// AfterWorkForTest says how often inst's work between cells was done by
// the next use of the instance (inline) and by the timer, and whether
// some is pending now.
func AfterWorkForTest(inst runtimes.Instance) (inline, timed int, pending bool) {
	a := &inst.(*Instance).after
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inline, a.timed, a.pending
}

// AfterTimerForTest says how often inst's after-cell timer fired, whether
// it is set, and how long after the pending work's due time it fires
// (negative: before).
func AfterTimerForTest(inst runtimes.Instance) (fired int, armed bool, late time.Duration) {
	a := &inst.(*Instance).after
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fired, a.armed, a.fireAt.Sub(a.due)
}

// AfterDelay is how long after a cell the timer does the work between
// cells, when nothing did it first.
const AfterDelay = afterDelay
