package sandbox

import (
	"context"
	"fmt"

	"github.com/wasmeval/wasmeval/runtimes/js"
)

// Wall-clock timers in a journaled session. A session whose clock is the
// host's (not deterministic, not recording or replaying a tape) runs its
// JavaScript timers on the wall clock, as node does: a timer fires while
// a host call is in flight, so Promise.race([tool('slow'), timeout]) times
// out. Which of the two came first is timing, not input, so the journal
// keeps what woke the cell's event loop at each of its waits (a timer:
// its id and due time; a host call's answer: its number), in order, in
// the entry's Wakes (js.WakeOrder). A rebuild replays them without
// waiting: the loop "fires" a timer where the journal says one fired
// (its clock reads fed from the journal, as every read is) and takes a
// call's answer (from the journal, in the order callorder keeps) where
// it says one was taken; a wait the journal does not hold, or one that
// finds another timer first, is a divergence, and the rebuild falls back
// to a reset naming it, as any divergence does.
//
// A session on its own clock (deterministic, or recording or replaying a
// tape) keeps its timers on that clock (runtimes/js/loop.go): a host call
// takes no time on it, and a tape replays it without wakes.

// jsWake is a js.Wake as an entry keeps it.
type jsWake struct {
	Timer int64 `json:"timer,omitempty"`
	Due   int64 `json:"due,omitempty"`
	Call  int   `json:"call,omitempty"`
}

// jsWall says whether the session's JavaScript timers run on the wall
// clock: its clock is the host's.
func (s *Session) jsWall() bool {
	return s.bound == nil || s.bound.nanotime == nil
}

// wallTimers is ctx for a JavaScript cell of the session: its timers on
// the wall clock, their wakes journaled while the journal records, when
// the session's clock is the host's; else ctx.
func (s *Session) wallTimers(ctx context.Context) context.Context {
	if !s.jsWall() {
		return ctx
	}
	o := &js.WakeOrder{}
	if t := s.persist.jrnl.tap; t != nil {
		o.Woke = t.wake
	}
	return js.WithWakeOrder(ctx, o)
}

// wake journals what woke the loop of the running cell.
func (t *jsTap) wake(w js.Wake) {
	t.record(jsEvent{kind: 'k', timer: w.Timer, ns: w.Due, made: w.Call})
}

// wakes are the wakes among evs, in order.
func wakes(evs []jsEvent) []jsWake {
	var out []jsWake
	for i := range evs {
		if e := &evs[i]; e.kind == 'k' {
			out = append(out, jsWake{Timer: e.timer, Due: e.ns, Call: e.made})
		}
	}
	return out
}

// setWakes makes the feed serve an entry's wakes.
func (f *jsFeed) setWakes(w []jsWake) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wakes, f.wakeAt = w, 0
}

// wakeOrder replays the feed's wakes to a cell's event loop.
func (f *jsFeed) wakeOrder() *js.WakeOrder {
	return &js.WakeOrder{
		Next: func() (js.Wake, bool) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.wakeAt >= len(f.wakes) {
				f.wakeAt++
				return js.Wake{}, false
			}
			w := f.wakes[f.wakeAt]
			f.wakeAt++
			return js.Wake{Timer: w.Timer, Due: w.Due, Call: w.Call}, true
		},
		Diverged: func(why string) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.diverge(why)
		},
	}
}

// timesText is n as a count of times: "once", "2 times".
func timesText(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}
