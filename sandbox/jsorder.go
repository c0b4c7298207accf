package sandbox

import (
	"context"
	"fmt"

	"github.com/wasmeval/wasmeval/runtimes/callorder"
	"github.com/wasmeval/wasmeval/runtimes/js"
	"github.com/wasmeval/wasmeval/tape"
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
// A session recording a tape without deterministic does the same (tape
// format 6): its timers run on the wall clock and each wake is a wake
// record of the tape (tapeWakes), which its replay takes the wakes from.
// A deterministic session, or the replay of a tape that holds no wakes
// (format 5 and older, or deterministic), keeps its timers on the
// session's clock (runtimes/js/loop.go): a host call takes no time on
// it, and the virtual or recorded clock alone decides.

// jsWake is a js.Wake as an entry keeps it.
type jsWake struct {
	Timer int64 `json:"timer,omitempty"`
	Due   int64 `json:"due,omitempty"`
	Call  int   `json:"call,omitempty"`
}

// jsWall says whether the session's JavaScript timers run on the wall
// clock: its clock is the host's, or it records a tape without
// deterministic, or replays a tape that recorded its wakes.
func (s *Session) jsWall() bool {
	b := s.bound
	switch {
	case b == nil || b.nanotime == nil:
		return true
	case s.opts.Deterministic:
		return false
	case s.opts.Replay != nil:
		w, ok := s.opts.Replay.(ReplayWakes)
		return ok && w.RecordsWakes()
	}
	return b.tape != nil
}

// ReplayWakes is a ReplayFeed that replays the wakes of JavaScript cells'
// event loops (tape format 6): the session's JavaScript timers then run
// on the wall clock, each loop's waits taking the recorded wakes in turn.
type ReplayWakes interface {
	// RecordsWakes says whether the tape holds the wakes.
	RecordsWakes() bool
	// NextWake is the next recorded wake of cell of request (as for
	// ReplayFeed.Stop), false when the tape holds no more.
	NextWake(request, cell int) (js.Wake, bool)
	// WakeDiverged says why that cell's loop could not follow them.
	WakeDiverged(request, cell int, why string)
}

// cellOrders is ctx for cell cell (in lang) of a session that records or
// replays a tape: its host calls recorded in the order its guest takes
// their answers, or replayed in the recorded order (callorder, for
// orderCalls), and, for a JavaScript cell whose timers run on the wall
// clock (jsWall), each wake of its event loop written to the tape (a
// wake record), or taken from it (ReplayWakes), and journaled too where
// the session's JavaScript journal records. Both in one layer of
// context: most cells never wait, and what a recorded cell costs more
// than a plain one is mostly what this makes.
func (s *Session) cellOrders(ctx context.Context, replayed bool, cell int, lang string) context.Context {
	o := s.tapeWakes(ctx, cell, lang)
	if o == nil {
		return callorder.With(ctx, replayed)
	}
	return js.WithOrders(ctx, replayed, o)
}

// tapeWakes is the wake order of JavaScript cell cell (whose context is
// ctx) of a session that records or replays a tape with its timers on
// the wall clock (jsWall), or nil. A recorded cell's is tapeWakeOrder,
// the same for every cell (nothing made for a cell: most never wait),
// unless the session's journal records its wakes too.
func (s *Session) tapeWakes(ctx context.Context, cell int, lang string) *js.WakeOrder {
	b := s.bound
	if lang != "js" && lang != "ts" || b == nil || b.tape == nil && s.opts.Replay == nil || !s.jsWall() {
		return nil
	}
	var journal func(context.Context, js.Wake)
	if p := s.persist; p != nil && p.jrnl.tap != nil {
		journal = p.jrnl.tap.wake
	}
	if w := watchOf(ctx); w != nil && journal == nil && s.opts.Replay == nil {
		w.s, w.cell = s, cell // what tapeWoke writes the wake with
		return tapeWakeOrder
	}
	n := tapeRequestOf(ctx)
	if rw, ok := s.opts.Replay.(ReplayWakes); ok {
		return &js.WakeOrder{
			Woke:     journal,
			Record:   "the tape",
			Next:     func() (js.Wake, bool) { return rw.NextWake(n, cell) },
			Diverged: func(why string) { rw.WakeDiverged(n, cell, why) },
		}
	}
	return &js.WakeOrder{Record: "the tape", Woke: func(ctx context.Context, k js.Wake) {
		s.tapeWake(n, cell, k)
		if journal != nil {
			journal(ctx, k)
		}
	}}
}

// tapeWakeOrder records the wakes of the JavaScript cells of every
// recorded session without a journal: the cell's context names its
// session and cell (its watch, set by tapeWakes) and its request.
var tapeWakeOrder = &js.WakeOrder{Record: "the tape", Woke: func(ctx context.Context, k js.Wake) {
	if w := watchOf(ctx); w != nil && w.s != nil {
		w.s.tapeWake(tapeRequestOf(ctx), w.cell, k)
	}
}}

// tapeWake writes a wake of the event loop of cell of request n (0: the
// top-level request) to the session's tape.
func (s *Session) tapeWake(n, cell int, k js.Wake) {
	rec := tape.Record{Type: tape.TypeWake, N: n, Cell: cell, Made: k.Call}
	if k.Timer != 0 {
		due := k.Due
		rec.Timer, rec.NS, rec.Made = k.Timer, &due, 0
	}
	if err := s.bound.tape.Write(rec); err != nil {
		s.tapeFailed("recording a wake of a JavaScript cell's event loop", err)
	}
}

// wallTimers is ctx for a JavaScript cell of the session: its timers on
// the wall clock, their wakes journaled while the journal records, when
// the session's clock is the host's; else ctx (and a session that
// records or replays a tape has tapeWakes do it).
func (s *Session) wallTimers(ctx context.Context) context.Context {
	if !s.jsWall() || s.bound != nil && (s.bound.tape != nil || s.opts.Replay != nil) {
		return ctx
	}
	o := &js.WakeOrder{}
	if t := s.persist.jrnl.tap; t != nil {
		o.Woke = t.wake
	}
	return js.WithWakeOrder(ctx, o)
}

// wake journals what woke the loop of the running cell.
func (t *jsTap) wake(_ context.Context, w js.Wake) {
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
