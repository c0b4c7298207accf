package js

import (
	"context"
	"fmt"

	"github.com/wasmeval/wasmeval/runtimes/callorder"
)

// Wall-clock timers whose order is kept. A cell's event loop sleeps until
// its first timer is due or a host call answers, whichever comes first,
// as node's does: a timer fires while a call is in flight, so that
// Promise.race([tool('slow'), timeout(100)]) times out. Which of the two
// woke the loop is an accident of timing, and a replay that has every
// answer at once would decide otherwise. So under WithWakeOrder the loop
// runs on the wall clock whatever clock InstanceOptions.Nanotime is, and
// tells each wake to WakeOrder.Woke (a recording: the sandbox's JavaScript
// journal, or a tape); or it takes its wakes from WakeOrder.Next (a replay) without
// waiting: a timer "fires" where the record says one did (its due time
// read from the recorded clock), a host call's answer is taken where the
// record says one was (in the order callorder keeps), and a wait the
// record does not hold, or holds otherwise, is a divergence
// (WakeOrder.Diverged), which ends the cell.
//
// Without WithWakeOrder the loop is as loop.go says: on the host's clock
// when the host gives none, else on the session's (timers wait for the
// calls in flight, which a tape replays without knowing wakes).

// Wake is what woke a cell's event loop from a wait.
type Wake struct {
	// Timer is the id of the timer whose wait ended, Due its due time
	// on the loop's clock (nanoseconds); 0 when a call's answer woke it.
	Timer int64
	Due   int64
	// Call is the number of the host call whose answer the guest took,
	// as CallTicket.Made (0 for a call made without a ticket).
	Call int
}

func (w Wake) String() string {
	if w.Timer != 0 {
		return fmt.Sprintf("timer %d (due at %d ns)", w.Timer, w.Due)
	}
	return fmt.Sprintf("the answer of host call %d", w.Call)
}

// WakeOrder makes a cell's timers run on the wall clock with the order of
// its loop's wakes kept: recorded (Woke), or replayed (Next).
type WakeOrder struct {
	// Woke, when not nil, is told each wake as the loop takes it, on the
	// cell's goroutine, with the cell's context (that of Run or of the
	// nested cell): a WakeOrder may then serve many cells, each of which
	// its context names.
	Woke func(ctx context.Context, w Wake)
	// Next, when not nil, replays: it returns the wake recorded for the
	// loop's next wait, false when the record holds no more.
	Next func() (Wake, bool)
	// Diverged is told why a replayed loop could not follow the record;
	// the cell then ends, failed.
	Diverged func(why string)
	// Record names what holds the wakes in the reasons Diverged is
	// given: "the journal" when empty (a session's JavaScript journal),
	// "the tape" for a recorded session's.
	Record string
}

// record is what the reasons of a divergence name as holding the wakes.
func (o *WakeOrder) record() string {
	if o.Record == "" {
		return "the journal"
	}
	return o.Record
}

type wakeKey struct{}

// WithWakeOrder returns a context whose cell runs its timers on the wall
// clock, its wakes recorded or replayed by o.
func WithWakeOrder(ctx context.Context, o *WakeOrder) context.Context {
	return context.WithValue(ctx, wakeKey{}, o)
}

// WithOrders is WithWakeOrder(WithCallOrder(ctx, replayed), o) in one
// layer of context, one allocation: what a recorded or replayed cell
// runs with.
func WithOrders(ctx context.Context, replayed bool, o *WakeOrder) context.Context {
	return callorder.WithValue(ctx, replayed, wakeKey{}, o)
}

func wakeOrderOf(ctx context.Context) *WakeOrder {
	o, _ := ctx.Value(wakeKey{}).(*WakeOrder)
	return o
}

// replayedWake takes the recorded wake of the loop's wait with t first
// due (nil: none): 1 a timer, 2 a call's answer, 0 a divergence (told).
func (c *cellRun) replayedWake(t *timer) int {
	o := c.wakes
	w, ok := c.taken, true
	if c.kept {
		c.kept = false
	} else {
		w, ok = o.Next()
		c.taken = w
	}
	var why string
	rec := o.record()
	switch {
	case !ok:
		why = "waited once more than " + rec + " recorded"
	case w.Timer != 0 && t == nil:
		why = fmt.Sprintf("had no timer when %s says %s fired", rec, w)
	case w.Timer != 0 && (t.id != w.Timer || t.due != w.Due):
		why = fmt.Sprintf("had timer %d (due at %d ns) first when %s says %s fired", t.id, t.due, rec, w)
	case w.Timer == 0 && c.in.calls.pending == 0:
		why = fmt.Sprintf("had no host call in flight when %s says it took %s", rec, w)
	case w.Timer != 0:
		return 1
	default:
		c.wantCall = w.Call
		return 2
	}
	c.wakeDiverged(why)
	return 0
}

// keepWake has the next wait take the recorded wake taken last again: a
// nested eval woke the loop instead of the call's answer the record
// says came. The record holds no wake for a nested eval (its own cells
// have theirs): where it runs is the feed's to say, as when a call's
// answer, not the nested eval, woke the recorded loop there.
func (c *cellRun) keepWake() { c.kept = true }

// tookCall checks a replayed call's answer against the recorded wake, and
// records a live one; false: a divergence (told).
func (c *cellRun) tookCall(d callDone) bool {
	made := 0
	if d.ticket != nil {
		made = d.ticket.Made()
	}
	o := c.wakes
	if o.Next != nil && c.wantCall != 0 && made != 0 && made != c.wantCall {
		c.wakeDiverged(fmt.Sprintf("took the answer of host call %d when %s says it took that of call %d", made, o.record(), c.wantCall))
		return false
	}
	if o.Woke != nil {
		o.Woke(c.ctx, Wake{Call: made})
	}
	return true
}

// firedTimer records a live timer's wake.
func (c *cellRun) firedTimer(t *timer) {
	if o := c.wakes; o != nil && o.Woke != nil && t != nil {
		o.Woke(c.ctx, Wake{Timer: t.id, Due: t.due})
	}
}

func (c *cellRun) wakeDiverged(why string) {
	why = "its event loop " + why
	if c.wakes.Diverged != nil {
		c.wakes.Diverged(why)
	}
	c.in.sink.Stderr("Error: the replay of this cell diverged: " + why + "\n")
}
