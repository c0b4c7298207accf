// Package callorder keeps the order in which a cell's guest takes the
// answers of its concurrent host calls, for a recorded or replayed
// session. It is shared by the runtimes (JavaScript's event loop, Python's
// call_wait) and the sandbox that records and replays them.
//
// A cell's host calls run at once, each on a goroutine of its own, and the
// runtime hands the guest their answers in the order they come. Which
// comes first is an accident of timing when recorded; a replay, which has
// every answer at once, would hand them over in yet another order, and a
// guest that prints each answer as it comes would print another text. So
// under With each call's context carries a Ticket: a recorder writes the
// call when the guest takes its answer (Ticket.WhenTaken), so the tape
// holds the calls in the order the guest saw their answers, and a replay
// says which recorded call each replayed one is (Ticket.SetRank), and the
// runtime holds an answer back (Cell) until those recorded before it have
// been taken.
package callorder

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

type orderKey struct{}

// With returns a context whose cell numbers its host calls and hands each
// call's context a Ticket (TicketOf); replayed says the cell is replayed:
// its answers are handed to the guest in the order of their ranks
// (Ticket.SetRank) rather than as they come.
func With(ctx context.Context, replayed bool) context.Context {
	c := &progressCtx{Context: ctx}
	c.p.replayed = replayed
	return c
}

// WithValue is With whose context also carries val under key, as
// context.WithValue's would, in the same allocation: a runtime that keeps
// more of a recorded cell's order (JavaScript's wakes) adds no layer of
// its own to the cell's context, which every lookup in the cell walks.
// key must be comparable, and not nil.
func WithValue(ctx context.Context, replayed bool, key, val any) context.Context {
	c := &progressCtx{Context: ctx, key: key, val: val}
	c.p.replayed = replayed
	return c
}

// progressCtx is With's context: it carries its Progress in the same
// allocation (a cell of a recorded session makes one), and WithValue's
// value.
type progressCtx struct {
	context.Context
	p        Progress
	key, val any
}

func (c *progressCtx) Value(key any) any {
	switch {
	case key == (orderKey{}):
		return &c.p
	case c.key != nil && key == c.key:
		return c.val
	}
	return c.Context.Value(key)
}

// Progress is where a cell run under With is in its waits for host
// calls (Python's call_wait, counted over the cell from 1; a runtime
// without such waits, JavaScript's, reports none), for the evals nested
// in it: a recording notes the wait each ran in (Entered), a replay runs
// each in the wait it was recorded in.
type Progress struct {
	replayed bool
	mu       sync.Mutex
	wait     int  // the cell's current (or last) wait, 0 before the first
	in       bool // the cell is in that wait now: a nested cell may enter
	open     int  // calls made whose answers the guest has not taken
	held     int  // answers a replay holds back for their turn
	ended    bool
	changed  chan struct{} // closed at the next change; nil until asked for
}

// ProgressOf returns the progress of the cell run with ctx (With), or nil.
func ProgressOf(ctx context.Context) *Progress {
	p, _ := ctx.Value(orderKey{}).(*Progress)
	return p
}

// Now says where the cell is: its current wait, whether it is in it (a
// nested cell would enter it now), how many of its calls' answers it has
// not taken, and whether it ended; changed is closed at the next change.
func (p *Progress) Now() (wait int, in bool, open int, ended bool, changed <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.wait, p.in, p.open, p.ended, p.changed
}

// Held is how many answers of the cell's calls a replay holds back now,
// which came before their turn (Cell.Came); changed is closed at the
// next change of the progress.
func (p *Progress) Held() (n int, changed <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.held, p.changed
}

// update changes p under its lock and wakes those that wait for a change.
func (p *Progress) update(f func(p *Progress)) {
	if p == nil {
		return
	}
	p.mu.Lock()
	f(p)
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
	p.mu.Unlock()
}

type enteredKey struct{}

// WithEntered returns the context of a nested cell whose runtime, when it
// runs the cell inside the waiting cell's wait, tells f that wait's
// number (Entered).
func WithEntered(ctx context.Context, f func(wait int)) context.Context {
	return context.WithValue(ctx, enteredKey{}, f)
}

// Entered is what a runtime calls as it runs the nested cell whose context
// is ctx inside a waiting cell, in that cell's wait-th wait (Waiting).
func Entered(ctx context.Context, wait int) {
	if f, _ := ctx.Value(enteredKey{}).(func(int)); f != nil {
		f(wait)
	}
}

type ticketKey struct{}

// Ranks of a ticket before SetRank, and of one SetRank gave no place.
const (
	rankUnknown = -2
	rankNone    = -1
)

// Ticket is one host call of a cell run under With.
type Ticket struct {
	made int
	rank atomic.Int64
	// ranked is its replayed cell's (Cell.Ranked), told at SetRank; nil
	// when the cell is not replayed.
	ranked chan struct{}

	mu    sync.Mutex
	taken func()
	// wait is the guest's wait for host calls in which it took the answer
	// (Python's call_wait, counted over its cell; 0 where the runtime has
	// no such waits); set before taken runs.
	wait atomic.Int64

	// arrived is when its answer came, counted in the order answers came
	// (0: not yet); used by the cell's goroutine only.
	arrived int
}

// TicketOf returns the ticket of the host call whose context is ctx, or
// nil when its cell is not run under With.
func TicketOf(ctx context.Context) *Ticket {
	t, _ := ctx.Value(ticketKey{}).(*Ticket)
	return t
}

// Made is the call's number among its cell's calls, from 1, in the order
// the guest made them.
func (t *Ticket) Made() int { return t.made }

// Wait is the number of the guest's wait for host calls (Python's
// call_wait, counted over its cell from 1) in which it took the call's
// answer; 0 before it took it, for an answer it never took, and where the
// runtime has no such waits (JavaScript).
func (t *Ticket) Wait() int { return int(t.wait.Load()) }

// WhenTaken makes f run when the guest takes the call's answer, on the
// cell's goroutine, or when the cell ends without taking it. It must be
// called before the call returns its answer.
func (t *Ticket) WhenTaken(f func()) {
	t.mu.Lock()
	t.taken = f
	t.mu.Unlock()
}

// SetRank gives a replayed call its place among the recorded answers
// (the guest takes answers of lower rank first); a negative rank (a call
// the tape does not hold) gives it none: it is handed over after those
// that have one, as it comes. It must be called before the call returns.
func (t *Ticket) SetRank(rank int) {
	if rank < 0 {
		rank = rankNone
	}
	t.rank.Store(int64(rank))
	if t.ranked != nil {
		select {
		case t.ranked <- struct{}{}:
		default: // the cell was told already, and has not looked yet
		}
	}
}

func (t *Ticket) take() {
	t.mu.Lock()
	f := t.taken
	t.taken = nil
	t.mu.Unlock()
	if f != nil {
		f()
	}
}

// order is the rank by which held answers are compared.
func (t *Ticket) order() int64 {
	if r := t.rank.Load(); r >= 0 {
		return r
	}
	return math.MaxInt64
}

// Cell is the order state of a cell's host calls, whose answers are of
// type D (on, when the cell is run under With); used by the cell's
// goroutine only. Its methods do nothing when it is off. Its zero value
// is off.
type Cell[D any] struct {
	on       bool
	replayed bool
	made     int
	arrivals int
	out      []*Ticket // the calls whose answers were not taken, as made
	held     []held[D] // replayed answers waiting for their turn, as they came
	// ranked is told when a replayed call is given its rank (Ranked).
	ranked chan struct{}
	// progress is the cell's (With), which the evals nested in it read.
	progress *Progress
}

type held[D any] struct {
	t *Ticket
	d D
}

// NewCell is the order state of a cell run with ctx.
func NewCell[D any](ctx context.Context) Cell[D] {
	p := ProgressOf(ctx)
	if p == nil {
		return Cell[D]{}
	}
	o := Cell[D]{on: true, replayed: p.replayed, progress: p}
	if p.replayed {
		o.ranked = make(chan struct{}, 1)
	}
	return o
}

// Waiting notes that the guest began its wait-th wait for host calls
// (Python's call_wait), in which nested cells may enter until it takes
// an answer (or is stopped: Left).
func (o *Cell[D]) Waiting(wait int) {
	if o.on {
		o.progress.update(func(p *Progress) { p.wait, p.in = wait, true })
	}
}

// Left notes that the guest left its wait without an answer (stopped).
func (o *Cell[D]) Left() {
	if o.on {
		o.progress.update(func(p *Progress) { p.in = false })
	}
}

// On says whether the cell's calls are ordered (recorded or replayed).
func (o *Cell[D]) On() bool { return o.on }

// Ticket numbers a new call made with ctx: its context and ticket (ctx
// and nil when the cell is not ordered).
func (o *Cell[D]) Ticket(ctx context.Context) (context.Context, *Ticket) {
	if !o.on {
		return ctx, nil
	}
	o.made++
	t := &Ticket{made: o.made, ranked: o.ranked}
	t.rank.Store(rankUnknown)
	o.out = append(o.out, t)
	o.progress.update(func(p *Progress) { p.open = len(o.out) })
	return context.WithValue(ctx, ticketKey{}, t), t
}

// Came takes the answer d of the call t that just came, in the guest's
// wait-th wait for host calls (0 where the runtime has none): it returns
// the answer the guest takes now (d itself but in a replay), or false
// when the replay holds d back for answers recorded before it, which are
// still to come. A nil t (a call made without a ticket) is taken at once.
func (o *Cell[D]) Came(t *Ticket, d D, wait int) (D, bool) {
	if !o.on || t == nil {
		return d, true
	}
	o.arrivals++
	t.arrived = o.arrivals
	if !o.replayed {
		o.taken(t, wait)
		return d, true
	}
	o.held = append(o.held, held[D]{t, d})
	if d, ok := o.Turn(wait); ok {
		return d, true
	}
	o.heldChanged()
	var none D
	return none, false
}

// Ranked is told when a call of the replayed cell is given its rank
// while the cell holds an answer back (nil, never ready, when it holds
// none or is not replayed): a guest that waits for host calls waits on it
// too, and asks for Turn again when it is told. The held answer's turn
// may come with that rank and no answer after it: the call ranked before
// it can be one whose replayed answer waits for the guest to take the
// held one (an eval nested in a later wait of the guest runs first).
func (o *Cell[D]) Ranked() <-chan struct{} {
	if len(o.held) == 0 {
		return nil
	}
	return o.ranked
}

// heldChanged tells the cell's progress how many answers it holds.
func (o *Cell[D]) heldChanged() {
	o.progress.update(func(p *Progress) { p.held = len(o.held) })
}

// Turn returns the held answer whose turn it is, if any, for the guest's
// wait-th wait: the one of the lowest rank, when no call still in flight
// has a lower rank or one not known yet.
func (o *Cell[D]) Turn(wait int) (D, bool) {
	var none D
	best := o.due()
	if best < 0 {
		return none, false
	}
	h := o.held[best]
	o.held = slices.Delete(o.held, best, best+1)
	o.taken(h.t, wait)
	return h.d, true
}

// Due says whether a held answer's turn has come (Turn would return it).
func (o *Cell[D]) Due() bool { return o.due() >= 0 }

// due is the index in held of the answer whose turn it is, or -1.
func (o *Cell[D]) due() int {
	if !o.on || len(o.held) == 0 {
		return -1
	}
	best := 0
	for i := range o.held {
		if o.held[i].t.order() < o.held[best].t.order() {
			best = i
		}
	}
	r := o.held[best].t.order()
	for _, t := range o.out {
		if t.arrived == 0 && (t.rank.Load() == rankUnknown || t.order() < r) {
			return -1
		}
	}
	return best
}

// Hold keeps the answer d of call t, which just came, without handing it
// over (a replayed cell that is to be stopped before it takes another
// answer); Turn hands it over later, or End returns it.
func (o *Cell[D]) Hold(t *Ticket, d D) {
	o.arrivals++
	t.arrived = o.arrivals
	o.held = append(o.held, held[D]{t, d})
	o.heldChanged()
}

func (o *Cell[D]) taken(t *Ticket, wait int) {
	o.out = slices.DeleteFunc(o.out, func(x *Ticket) bool { return x == t })
	// The wait ends with its answer.
	o.progress.update(func(p *Progress) { p.open, p.in, p.held = len(o.out), false, len(o.held) })
	t.wait.Store(int64(wait))
	t.take()
}

// Drained notes the answer of call t, which the cell ended without
// taking.
func (o *Cell[D]) Drained(t *Ticket) {
	if o.on && t != nil && t.arrived == 0 {
		o.arrivals++
		t.arrived = o.arrivals
	}
}

// End runs the hooks of the calls whose answers the cell did not take
// (it ended first), in the order the answers came, and returns the
// answers a replay held back, which the guest never took.
func (o *Cell[D]) End() []D {
	if !o.on {
		return nil
	}
	o.progress.update(func(p *Progress) { p.in, p.ended, p.held = false, true, 0 })
	slices.SortStableFunc(o.out, func(a, b *Ticket) int {
		x, y := a.arrived, b.arrived
		if x == 0 {
			x = math.MaxInt
		}
		if y == 0 {
			y = math.MaxInt
		}
		return x - y
	})
	for _, t := range o.out {
		t.take()
	}
	var left []D
	for _, h := range o.held {
		left = append(left, h.d)
	}
	o.out, o.held = nil, nil
	return left
}
