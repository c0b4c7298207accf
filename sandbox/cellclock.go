package sandbox

import (
	"context"
	"sync"
	"time"
)

// cellClock is the two timers of a running cell, its inactivity timeout
// and its hard limit, made once and reused by the session's later cells.
//
// Why (issue 15, the eval line round trip): two time.AfterFunc timers a
// cell, made and stopped, cost ~3 µs of a trivial cell's CPU (the
// allocations, and a timer added to an emptied heap wakes an idle thread
// to watch it); resetting timers that stay in the heap costs a fifth of
// that.
//
// A timer that was reused can fire late for the cell it was armed for,
// while the next cell runs (AfterFunc's Stop does not wait for a callback
// it was too late to stop). So a callback cancels the cell only when that
// cell's own deadline has passed: the running activity's (not held, and
// its deadline reached) for the timeout, hardAt for the hard limit.
type cellClock struct {
	timeout, hard *time.Timer

	mu     sync.Mutex
	cancel context.CancelCauseFunc // the running cell's; nil between cells
	act    *activity               // the running cell's inactivity timer
	hardAt time.Time               // when the running cell reaches its hard limit
	off    bool                    // a replayed stop stopped the timers (record.go)
}

// cellClocks are a session's idle clocks. Evals nested in a cell run
// while it runs, each with a clock of its own, so there may be several.
type cellClocks struct {
	mu   sync.Mutex
	idle []*cellClock
}

// take returns an idle clock, or a new one.
func (cs *cellClocks) take() *cellClock {
	cs.mu.Lock()
	if n := len(cs.idle); n > 0 {
		ck := cs.idle[n-1]
		cs.idle = cs.idle[:n-1]
		cs.mu.Unlock()
		return ck
	}
	cs.mu.Unlock()
	ck := &cellClock{}
	// Made stopped: AfterFunc has no stopped form, so arm far away and stop.
	ck.timeout = time.AfterFunc(time.Hour, ck.timedOut)
	ck.timeout.Stop()
	ck.hard = time.AfterFunc(time.Hour, ck.hardLimitReached)
	ck.hard.Stop()
	return ck
}

// put gives back a clock that start armed and stop stopped.
func (cs *cellClocks) put(ck *cellClock) {
	cs.mu.Lock()
	cs.idle = append(cs.idle, ck)
	cs.mu.Unlock()
}

// start arms the clock for a cell: cancel with errCellTimeout when act's
// timer runs out (act.timer is ck.timeout), with errCellHardLimit at
// hardLimit from now.
func (ck *cellClock) start(cancel context.CancelCauseFunc, act *activity, hardLimit time.Duration) {
	now := time.Now()
	act.deadline = now.Add(act.timeout) // before a late callback can see act
	ck.mu.Lock()
	ck.cancel, ck.act, ck.hardAt, ck.off = cancel, act, now.Add(hardLimit), false
	ck.mu.Unlock()
	ck.timeout.Reset(act.timeout)
	ck.hard.Reset(hardLimit)
}

// stop disarms the clock at the cell's end; a callback that runs late
// then finds no cell.
func (ck *cellClock) stop() {
	ck.timeout.Stop()
	ck.hard.Stop()
	ck.mu.Lock()
	ck.cancel, ck.act = nil, nil
	ck.mu.Unlock()
}

// stoppedByReplay notes that replayStop stopped the timers for good: the
// cell's end comes from the tape, never from a late callback.
func (ck *cellClock) stoppedByReplay() {
	ck.mu.Lock()
	ck.off = true
	ck.mu.Unlock()
}

// timedOut is the timeout timer's callback.
func (ck *cellClock) timedOut() {
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if ck.cancel == nil || ck.off || !ck.act.due() {
		return // a late callback of a cell that ended, or a timer restarted meanwhile
	}
	ck.cancel(errCellTimeout)
}

// hardLimitReached is the hard-limit timer's callback.
func (ck *cellClock) hardLimitReached() {
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if ck.cancel == nil || ck.off || time.Now().Before(ck.hardAt) {
		return
	}
	ck.cancel(errCellHardLimit)
}

// due reports whether the inactivity timer has run out: it runs (no host
// call holds it) and its deadline has passed. The timer fires at or after
// the deadline restartLocked set with it, so a timely callback always
// finds it due.
func (a *activity) due() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.held && !time.Now().Before(a.deadline)
}
