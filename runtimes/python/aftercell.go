package python

import (
	"sync"
	"time"
)

// afterWork is the work between cells: giving the pages of large free
// heap chunks back to the OS (a cell that used and freed 200 MiB does not
// keep them), then, with checkpoints on, taking the checkpoint of the
// instance at rest.
//
// It is done by whoever comes first: the next use of the instance (every
// Instance method settles it before it touches the guest: waitCheckpoint),
// on its own goroutine, or a timer afterDelay after the cell, on the
// timer's. A session used by a person or a model is idle for far longer
// than afterDelay between cells, so the work is off its next cell's path;
// a program that runs cells back to back does it inline, without handing
// it to another goroutine and waiting for that one: the hand-off (waking
// an idle thread, parking and waking the waiter) cost more CPU than the
// trim itself (measured ~13 µs a trivial cell on either engine, against
// ~2 µs of trim).
type afterWork struct {
	mu      sync.Mutex // held while the work runs
	pending bool
	timer   *time.Timer
	// armed says the timer is set, to fire at fireAt; due is when the
	// pending work is due. Cells back to back leave the timer set and
	// move due on (a Stop and a Reset of the timer each cell cost more);
	// a cell that finds fireAt less than afterDelay/2 away moves it on
	// too, to afterDelay after the cell, so that while cells keep coming
	// (each doing the last one's work inline) the timer does not fire: it
	// fires once they stop (or pause for afterDelay/2), and when that is
	// before due it is set again for what is left (issue 15: it fired
	// every afterDelay during back-to-back cells, a goroutine and a
	// thread woken each time to find the work done).
	armed  bool
	due    time.Time
	fireAt time.Time
	// How often the work was done by the next use (inline) and by the
	// timer, and how often the timer fired, for tests.
	inline, timed, fired int
}

// afterDelay is how long a finished cell's after-work waits for the next
// use of the instance before the timer does it.
const afterDelay = time.Millisecond

// afterCell schedules the work between cells (see afterWork).
func (in *Instance) afterCell() {
	a := &in.after
	a.mu.Lock()
	now := time.Now()
	a.pending = true
	a.due = now.Add(afterDelay)
	switch {
	case a.timer == nil:
		a.timer = time.AfterFunc(afterDelay, in.afterTimer)
		a.fireAt = a.due
	case !a.armed || a.fireAt.Sub(now) < afterDelay/2:
		a.timer.Reset(afterDelay)
		a.fireAt = a.due
	}
	a.armed = true
	a.mu.Unlock()
}

// afterTimer is the timer's: it does the pending work once due, or sets
// the timer again for when it is.
func (in *Instance) afterTimer() {
	a := &in.after
	a.mu.Lock()
	a.fired++
	if d := time.Until(a.due); a.pending && d > 0 && a.armed {
		a.timer.Reset(d)
		a.fireAt = a.due
		a.mu.Unlock()
		return
	}
	a.armed = false
	a.mu.Unlock()
	in.settle(false)
}

// waitCheckpoint brings the instance to rest: the work between cells done,
// here if the timer has not done it yet (the timer, left set, then finds
// none).
func (in *Instance) waitCheckpoint() {
	in.settle(true)
}

// dropAfterWork forgets the pending work (the instance is being closed).
func (in *Instance) dropAfterWork() {
	in.after.mu.Lock()
	if t := in.after.timer; t != nil {
		t.Stop()
	}
	in.after.pending, in.after.armed = false, false
	in.after.mu.Unlock()
}

// settle does the pending work between cells, if any (inline: for the
// next use of the instance, not the timer); a second caller waits for the
// first.
func (in *Instance) settle(inline bool) {
	a := &in.after
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.pending {
		return
	}
	a.pending = false
	if inline {
		a.inline++
	} else {
		a.timed++
	}
	if !in.opts.Checkpoints {
		in.trimHeap(afterCellTrim)
		return
	}
	written, ok := in.writes()
	in.trimHeap(afterCellTrim)
	in.takeCheckpoint(written, ok)
}
