package js

import (
	"context"

	"github.com/wasmeval/wasmeval/runtimes/callorder"
)

// The order of a cell's host calls, for a recorded or replayed session
// (package callorder): the event loop hands the guest its calls' answers
// in the order they come, which a recording notes (each call is written
// when the guest takes its answer) and a replay reproduces (an answer is
// held back until those recorded before it have been taken), at the same
// turns of the loop.

// WithCallOrder returns a context whose cell numbers its host calls and
// hands each call's context a CallTicket (TicketOf); replayed says the
// cell is replayed: its answers are handed to the guest in the order of
// their ranks (CallTicket.SetRank) rather than as they come.
func WithCallOrder(ctx context.Context, replayed bool) context.Context {
	return callorder.With(ctx, replayed)
}

// CallTicket is one host call of a cell run under WithCallOrder.
type CallTicket = callorder.Ticket

// TicketOf returns the ticket of the host call whose context is ctx, or
// nil when its cell is not run under WithCallOrder.
func TicketOf(ctx context.Context) *CallTicket { return callorder.TicketOf(ctx) }

// callOrder is the order state of a cell's host calls (on, when the cell
// is run under WithCallOrder); used by the cell's goroutine only. Its
// methods do nothing when it is off.
type callOrder struct {
	c callorder.Cell[callDone]
}

// newCallOrder is the order state of a cell run with ctx (in its
// hostCalls: no allocation of its own).
func newCallOrder(ctx context.Context) callOrder {
	return callOrder{callorder.NewCell[callDone](ctx)}
}

// ticket numbers a new call made with ctx: its context and ticket.
func (o *callOrder) ticket(ctx context.Context) (context.Context, *CallTicket) {
	return o.c.Ticket(ctx)
}

// drained notes an answer the cell ended without taking.
func (o *callOrder) drained(d callDone) { o.c.Drained(d.ticket) }

// end runs the hooks of the calls whose answers the cell did not take
// (it ended first), in the order the answers came.
func (o *callOrder) end() { o.c.End() }

// waiting says the cell's loop waits now, in its wait-th wait (from 1): a
// wait for a timer, a host call's answer or a nested cell, whichever
// comes; an eval nested in the cell may enter (callorder.Progress). The
// answer the guest takes in it is recorded with that wait (tape format
// 7), as a Python cell's call_wait is.
func (c *hostCalls) waiting(wait int) { c.order.c.Waiting(wait) }

// left says the loop's wait ended.
func (c *hostCalls) left() { c.order.c.Left() }

// entered tells a nested cell's recording or replay (callorder.Entered)
// that it runs in the waiting cell's wait-th wait.
func entered(req *nestedRun, wait int) { callorder.Entered(req.ctx, wait) }

// heldTurn is a replayed answer held earlier whose turn it is now
// (woken 2), or woken 0; none once ctx is done: the stop comes first.
// wait is the loop's wait that takes it.
func (c *hostCalls) heldTurn(ctx context.Context, wait int) (callDone, int) {
	if !c.order.c.On() || ctx.Err() != nil {
		return callDone{}, 0
	}
	if d, ok := c.order.c.Turn(wait); ok {
		return d, 2
	}
	return callDone{}, 0
}

// ranked is told when a replayed call is given its rank while an answer
// is held (callorder.Cell.Ranked): the loop asks heldTurn again.
func (c *hostCalls) ranked() <-chan struct{} { return c.order.c.Ranked() }

// inTurn takes the answer *d that just came, and says whether the guest
// takes an answer now (*d, which may be another, held before), in the
// loop's wait-th wait; false: the loop waits on.
func (c *hostCalls) inTurn(ctx context.Context, d *callDone, wait int) bool {
	if !c.order.c.On() || ctx.Err() != nil {
		return true
	}
	nd, ok := c.order.c.Came(d.ticket, *d, wait)
	if ok {
		*d = nd
	}
	return ok
}
