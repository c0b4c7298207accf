package sandbox

import (
	"context"
	"time"
)

// Nested evals spend the timeout of the cell they run in. A host call in
// flight holds a cell's inactivity timer (waiting on the host is not the
// guest idling) and status events restart it, agent()'s own "started" and
// "done" among them. But the evals a sub-agent runs inside the waiting
// cell are the session's own code, run on the cell's behalf: counted as
// waiting, a cell that loops over agent() would run until its hard limit,
// ten times its timeout, however little it waits on anyone. So once an
// eval has run nested in a cell, the cell's timeout is a budget for the
// rest of it: its timer runs while its nested evals do, goes on from what
// is left when a host call ends, and status events no longer restart it.
// It still stops while the cell waits on the host with no nested eval
// running (a sub-agent's model thinking).

// restartLocked starts the stopped timer to fire in d.
func (a *activity) restartLocked(d time.Duration) {
	a.deadline = time.Now().Add(d)
	a.timer.Reset(d)
}

// pauseLocked stops the timer while the cell waits on the host, keeping
// what it had left. A timer that fired stays fired.
func (a *activity) pauseLocked() {
	if !a.held && a.timer.Stop() {
		a.held, a.left = true, time.Until(a.deadline)
	}
}

// resumeLocked starts the held timer again when the cell stops waiting:
// afresh, or, once evals ran nested in the cell, with what was left.
func (a *activity) resumeLocked() {
	if !a.held {
		return
	}
	a.held = false
	d := a.timeout
	if a.ranNest {
		d = max(a.left, 0)
	}
	a.restartLocked(d)
}

// nestedRun counts an eval running nested in the cell, with the cell's
// timer running meanwhile, until the returned function is called. A nil
// activity counts nothing.
func (a *activity) nestedRun() (done func()) {
	if a == nil {
		return func() {}
	}
	a.mu.Lock()
	a.nested++
	a.ranNest = true
	if a.held {
		a.held = false
		a.restartLocked(max(a.left, 0))
	}
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.nested--
		if a.nested == 0 && a.inFlight > 0 {
			a.pauseLocked()
		}
	}
}

// nestedSpentNote is what the note of a cell that timed out adds when
// evals ran nested in it.
func nestedSpentNote(ctx context.Context) string {
	a, _ := ctx.Value(activityKey{}).(*activity)
	if a == nil {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.ranNest {
		return ""
	}
	return " (the evals that ran inside it while it waited in agent() or tool() spend its timeout, which status events then no longer restart)"
}
