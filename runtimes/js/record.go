package js

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// The order of a cell's host calls, for a recorded or replayed session.
//
// A cell's host calls run at once, each on a goroutine of its own, and the
// event loop hands the guest their answers in the order they come: with
// Promise.all([tool(a), tool(b)]), or calls whose .then callbacks print,
// the guest may see b's answer first. A replay, which has every answer at
// once, would hand them over in another order. So under WithCallOrder
// each call's context carries a CallTicket: a recorder writes the call
// when the guest takes its answer (CallTicket.WhenTaken), so the tape
// holds the calls in the order the guest saw their answers, and a replay
// says which recorded call each replayed one is (CallTicket.SetRank), and
// the loop holds an answer back until those recorded before it have been
// taken.

type callOrderKey struct{}

// WithCallOrder returns a context whose cell numbers its host calls and
// hands each call's context a CallTicket (TicketOf); replayed says the
// cell is replayed: its answers are handed to the guest in the order of
// their ranks (CallTicket.SetRank) rather than as they come.
func WithCallOrder(ctx context.Context, replayed bool) context.Context {
	return context.WithValue(ctx, callOrderKey{}, replayed)
}

type ticketKey struct{}

// Ranks of a ticket before SetRank, and of one SetRank gave no place.
const (
	rankUnknown = -2
	rankNone    = -1
)

// CallTicket is one host call of a cell run under WithCallOrder.
type CallTicket struct {
	made int
	rank atomic.Int64

	mu    sync.Mutex
	taken func()

	// arrived is when its answer came, counted in the order answers came
	// (0: not yet); used by the cell's goroutine only.
	arrived int
}

// TicketOf returns the ticket of the host call whose context is ctx, or
// nil when its cell is not run under WithCallOrder.
func TicketOf(ctx context.Context) *CallTicket {
	t, _ := ctx.Value(ticketKey{}).(*CallTicket)
	return t
}

// Made is the call's number among its cell's calls, from 1, in the order
// the guest made them.
func (t *CallTicket) Made() int { return t.made }

// WhenTaken makes f run when the guest takes the call's answer, on the
// cell's goroutine, or when the cell ends without taking it. It must be
// called before the call returns its answer.
func (t *CallTicket) WhenTaken(f func()) {
	t.mu.Lock()
	t.taken = f
	t.mu.Unlock()
}

// SetRank gives a replayed call its place among the recorded answers
// (the guest takes answers of lower rank first); a negative rank (a call
// the tape does not hold) gives it none: it is handed over after those
// that have one, as it comes. It must be called before the call returns.
func (t *CallTicket) SetRank(rank int) {
	if rank < 0 {
		rank = rankNone
	}
	t.rank.Store(int64(rank))
}

func (t *CallTicket) take() {
	t.mu.Lock()
	f := t.taken
	t.taken = nil
	t.mu.Unlock()
	if f != nil {
		f()
	}
}

// order is the rank by which held answers are compared.
func (t *CallTicket) order() int64 {
	if r := t.rank.Load(); r >= 0 {
		return r
	}
	return math.MaxInt64
}

// callOrder is the order state of a cell's host calls (on, when the cell
// is run under WithCallOrder); used by the cell's goroutine only. Its
// methods do nothing when it is off.
type callOrder struct {
	on       bool
	replayed bool
	made     int
	arrivals int
	out      []*CallTicket // the calls whose answers were not taken, as made
	held     []callDone    // replayed answers waiting for their turn, as they came
}

// newCallOrder is the order state of a cell run with ctx (in its
// hostCalls: no allocation of its own).
func newCallOrder(ctx context.Context) callOrder {
	replayed, ok := ctx.Value(callOrderKey{}).(bool)
	return callOrder{on: ok, replayed: replayed}
}

// ticket numbers a new call made with ctx: its context and ticket.
func (o *callOrder) ticket(ctx context.Context) (context.Context, *CallTicket) {
	if !o.on {
		return ctx, nil
	}
	o.made++
	t := &CallTicket{made: o.made}
	t.rank.Store(rankUnknown)
	o.out = append(o.out, t)
	return context.WithValue(ctx, ticketKey{}, t), t
}

// came takes the answer d that just came: it returns the answer the guest
// takes now (d itself but in a replay), or false when the replay holds d
// back for answers recorded before it, which are still to come.
func (o *callOrder) came(d callDone) (callDone, bool) {
	if !o.on || d.ticket == nil {
		return d, true
	}
	o.arrivals++
	d.ticket.arrived = o.arrivals
	if !o.replayed {
		o.taken(d.ticket)
		return d, true
	}
	o.held = append(o.held, d)
	return o.turn()
}

// turn returns the held answer whose turn it is, if any: the one of the
// lowest rank, when no call still in flight has a lower rank or one not
// known yet.
func (o *callOrder) turn() (callDone, bool) {
	if !o.on || len(o.held) == 0 {
		return callDone{}, false
	}
	best := 0
	for i := range o.held {
		if o.held[i].ticket.order() < o.held[best].ticket.order() {
			best = i
		}
	}
	r := o.held[best].ticket.order()
	for _, t := range o.out {
		if t.arrived == 0 && (t.rank.Load() == rankUnknown || t.order() < r) {
			return callDone{}, false
		}
	}
	d := o.held[best]
	o.held = slices.Delete(o.held, best, best+1)
	o.taken(d.ticket)
	return d, true
}

func (o *callOrder) taken(t *CallTicket) {
	o.out = slices.DeleteFunc(o.out, func(x *CallTicket) bool { return x == t })
	t.take()
}

// drained notes an answer the cell ended without taking.
func (o *callOrder) drained(d callDone) {
	if o.on && d.ticket != nil && d.ticket.arrived == 0 {
		o.arrivals++
		d.ticket.arrived = o.arrivals
	}
}

// end runs the hooks of the calls whose answers the cell did not take
// (it ended first), in the order the answers came.
func (o *callOrder) end() {
	if !o.on {
		return
	}
	slices.SortStableFunc(o.out, func(a, b *CallTicket) int {
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
	o.out, o.held = nil, nil
}

// heldTurn is a replayed answer held earlier whose turn it is now
// (woken 2), or woken 0; none once ctx is done: the stop comes first.
func (c *hostCalls) heldTurn(ctx context.Context) (callDone, int) {
	if !c.order.on || ctx.Err() != nil {
		return callDone{}, 0
	}
	if d, ok := c.order.turn(); ok {
		return d, 2
	}
	return callDone{}, 0
}

// inTurn takes the answer *d that just came, and says whether the guest
// takes an answer now (*d, which may be another, held before); false:
// the loop waits on.
func (c *hostCalls) inTurn(ctx context.Context, d *callDone) bool {
	if !c.order.on || ctx.Err() != nil {
		return true
	}
	nd, ok := c.order.came(*d)
	if ok {
		*d = nd
	}
	return ok
}
