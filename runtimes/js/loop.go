package js

import (
	"container/heap"
	"time"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// The event loop is the session's own and runs on the goroutine of Run:
// goja is not safe for concurrent use, and nothing but timers can wake the
// guest (it has no I/O). Promise jobs (microtasks) are goja's: it runs them
// whenever control returns from JavaScript to Go, that is after the cell's
// script and after each timer callback.
//
// Timers fire in order of due time, then of creation, whatever the real
// clock does meanwhile, so that a session's output does not depend on the
// machine's speed.
//
// Due times are read from the loop's clock: the host's monotonic clock, or
// the session's (InstanceOptions.Nanotime) when the host gives one, as a
// deterministic, recorded or replayed session does. On the session's
// clock the loop decides from its readings alone, so a replay that feeds
// the same readings fires the same timers in the same order: a host call
// takes no time on it (timers not yet due wait for the calls in flight),
// and a wait for a timer is offered to InstanceOptions.Sleep, which moves
// a virtual clock on instead of waiting (js.go's cellRun.run).
//
// A cell run under WithWakeOrder (order.go) is on the wall clock whatever
// Nanotime is: a timer fires while a call is in flight, as node's does,
// and what woke the loop at each wait is recorded, or replayed without
// waiting. The sandbox runs a store-backed session's cells so (its
// JavaScript journal keeps the wakes), and those of a session recording a
// tape without deterministic, or replaying one that holds wakes (tape
// format 6); Nanotime is then the journal's or the tape's recorded or fed
// clock.

type timer struct {
	id       int64
	due      int64 // on the loop's clock, nanoseconds
	seq      uint64
	delay    time.Duration
	repeat   bool
	ref      bool
	callback goja.Callable
	// fn is the callback as a value, which a walk of the session sees
	// (walk.go): a Callable is a Go closure.
	fn    goja.Value
	index int // in the heap; -1 when not scheduled
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// loop holds a session's timers.
type loop struct {
	timers timerHeap
	byID   map[int64]*timer
	nextID int64
	seq    uint64
	refs   int // scheduled timers that keep the cell alive
	// now reads the loop's clock, in nanoseconds.
	now func() int64
}

// newLoop returns a loop on the clock nanotime, or on the host's monotonic
// clock when it is nil.
func newLoop(nanotime func() int64) *loop {
	if nanotime == nil {
		start := time.Now()
		nanotime = func() int64 { return int64(time.Since(start)) }
	}
	return &loop{byID: make(map[int64]*timer), now: nanotime}
}

func (l *loop) schedule(t *timer, now int64) {
	l.seq++
	t.seq = l.seq
	t.due = now + int64(t.delay)
	heap.Push(&l.timers, t)
	if t.ref {
		l.refs++
	}
}

// add schedules callback after delay and returns the timer's id.
func (l *loop) add(callback goja.Callable, fn goja.Value, delay time.Duration, repeat bool) int64 {
	l.nextID++
	t := &timer{id: l.nextID, delay: delay, repeat: repeat, ref: true, callback: callback, fn: fn, index: -1}
	l.byID[t.id] = t
	l.schedule(t, l.now())
	return t.id
}

// remove cancels a timer; unknown ids are ignored, as clearTimeout does.
func (l *loop) remove(id int64) {
	t, ok := l.byID[id]
	if !ok {
		return
	}
	delete(l.byID, id)
	if t.index >= 0 {
		heap.Remove(&l.timers, t.index)
		if t.ref {
			l.refs--
		}
	}
}

func (l *loop) setRef(id int64, ref bool) {
	t, ok := l.byID[id]
	if !ok || t.ref == ref {
		return
	}
	t.ref = ref
	if t.index >= 0 {
		if ref {
			l.refs++
		} else {
			l.refs--
		}
	}
}

func (l *loop) hasRef(id int64) bool {
	t, ok := l.byID[id]
	return ok && t.ref
}

// refresh restarts a timer's delay from now.
func (l *loop) refresh(id int64) {
	t, ok := l.byID[id]
	if !ok {
		return
	}
	if t.index >= 0 {
		heap.Remove(&l.timers, t.index)
		if t.ref {
			l.refs--
		}
	}
	l.schedule(t, l.now())
}

// next returns the timer that fires first, or nil.
func (l *loop) next() *timer {
	if len(l.timers) == 0 {
		return nil
	}
	return l.timers[0]
}

// pop takes the first timer off the schedule, and puts an interval back
// before its callback runs (so that the callback may clear it), due its
// delay after now.
func (l *loop) pop(now int64) *timer {
	t := heap.Pop(&l.timers).(*timer)
	if t.ref {
		l.refs--
	}
	if t.repeat {
		l.schedule(t, now)
	} else {
		delete(l.byID, t.id)
	}
	return t
}

// clear cancels every timer.
func (l *loop) clear() {
	clear(l.byID)
	for i := range l.timers {
		l.timers[i] = nil
	}
	l.timers = l.timers[:0]
	l.refs = 0
}
