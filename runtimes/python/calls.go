package python

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/callorder"
)

// Limits on a cell's host calls. A request larger than maxRequest gets an
// error response without reaching the host; more than maxInFlight calls
// at once are refused (call_start returns -1).
const (
	maxRequest  = 16 << 20
	maxInFlight = 64
)

// calls are the host calls of one running cell. call_start runs each on a
// goroutine of its own, so a guest that starts several (parallel) has
// them served concurrently although it is single-threaded; call_wait hands
// finished ones back in the order they finish.
type calls struct {
	ctx    context.Context
	cancel context.CancelFunc
	handle func(context.Context, []byte) []byte
	budget *hostcalls.CallBudget // nil: no bound on bytes in flight
	wg     sync.WaitGroup

	next     int32
	inFlight int
	done     chan finished
	results  map[int32]finished
	order    callorder.Cell[finished] // a recorded or replayed cell's (callorder.go)
}

type finished struct {
	id   int32
	resp []byte
	held int64 // bytes of budget held for resp until the guest has it
	// ticket orders the call's answer in a recorded or replayed cell.
	ticket *callorder.Ticket
}

func newCalls(ctx context.Context, handle func(context.Context, []byte) []byte, budget *hostcalls.CallBudget) *calls {
	c := &calls{handle: handle, budget: budget, done: make(chan finished, maxInFlight), results: map[int32]finished{}, order: callorder.NewCell[finished](ctx)}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c
}

// close cancels the calls still running when the cell ends and waits for
// them: none outlives its cell. Answers the guest never took give their
// budget back.
func (c *calls) close() {
	c.cancel()
	c.wg.Wait()
	for {
		select {
		case f := <-c.done:
			c.order.Drained(f.ticket)
			c.release(f.held)
			continue
		default:
		}
		break
	}
	for _, f := range c.order.End() { // callorder.go: held back by a replay
		c.release(f.held)
	}
	for id, f := range c.results {
		c.release(f.held)
		delete(c.results, id)
	}
}

func (c *calls) release(n int64) {
	if c.budget != nil && n > 0 {
		c.budget.Release(n)
	}
}

func errorResponse(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": msg}})
	return b
}

// start starts a call of req, for which reserved bytes of the budget are
// held; a non-empty refusal answers it with that error instead.
func (c *calls) start(req []byte, reserved int64, refusal string) int32 {
	if c.inFlight >= maxInFlight {
		c.release(reserved)
		return -1
	}
	c.next++
	id := c.next
	c.inFlight++
	c.wg.Add(1)
	ctx, ticket := c.order.Ticket(c.ctx) // callorder.go
	go func() {
		defer c.wg.Done()
		var resp []byte
		switch {
		case refusal != "":
			resp = errorResponse(refusal)
		case c.handle == nil:
			resp = errorResponse("this sandbox has no host calls configured")
		default:
			resp = c.handle(ctx, req)
		}
		// The request is done with. The answer waits for room in the
		// budget before it is queued, until the guest takes it: a guest
		// that takes none stalls its own calls.
		c.release(reserved)
		var held int64
		if c.budget != nil {
			held = min(int64(len(resp)), c.budget.Max())
			if err := c.budget.Acquire(c.ctx, held); err != nil {
				held, resp = 0, errorResponse("the cell ended before its answer could be kept")
			}
		}
		c.done <- finished{id, resp, held, ticket}
	}()
	return id
}

// waitCall blocks until a call finishes (its id) or the cell's context is
// done (-1, after tripping the interrupt so the guest raises
// KeyboardInterrupt). Meanwhile it runs the nested cells handed to it.
func (in *Instance) waitCall() int32 {
	c := in.calls
	if c.inFlight == 0 {
		return -2
	}
	stopDue := in.beginWait() // python.go: a replayed stop in this wait
	c.order.Waiting(int(in.waits))
	for {
		if stopDue {
			if in.stopTurn() { // callorder.go
				c.order.Left()
				return -1
			}
		} else if f, ok := in.heldTurn(); ok { // callorder.go: a replay's, in the recorded order
			return in.tookCall(f)
		}
		select {
		case f := <-c.done:
			if in.runCtx.Err() != nil {
				// Stopped meanwhile (a nested eval it ran was stopped with
				// it, and answered): the stop comes first.
				c.done <- f // buffered (maxInFlight): taken by close
				return in.stopWait()
			}
			if stopDue {
				c.order.Hold(f.ticket, f) // for stopTurn
				continue
			}
			if f, ok := in.inTurn(f); ok { // callorder.go
				return in.tookCall(f)
			}
		case <-c.order.Ranked():
			// A replayed call was given its rank: a held answer's turn
			// may have come with it (callorder.Cell.Ranked).
		case req := <-in.reentry.ch:
			// An eval of the session while this cell waits: run it here.
			in.runNested(req)
			if err := in.reentry.broken; err != nil {
				panic(fmt.Errorf("%w: %w", errNestedCrash, err))
			}
		case <-in.runCtx.Done():
			return in.stopWait()
		}
	}
}

// stopWait interrupts the waiting guest: call_wait returns -1.
func (in *Instance) stopWait() int32 {
	in.calls.order.Left()
	if !in.interrupted.Load() {
		in.firstTrip = time.Now()
		in.trip(in.firstTrip)
		in.waitStopped() // python.go: where, for a recording
	}
	return -1
}

// tookCall records a finished call for the guest to take; its id.
func (in *Instance) tookCall(f finished) int32 {
	c := in.calls
	c.inFlight--
	// The shim takes each answer right after its wait; one still here
	// was orphaned (taking it failed, e.g. MemoryError) and is dropped.
	for id, old := range c.results {
		c.release(old.held)
		delete(c.results, id)
	}
	c.results[f.id] = f
	return f.id
}

func hostCallStart(ctx context.Context, m api.Module, stack []uint64) {
	in, _ := ctx.Value(instKey{}).(*Instance)
	ptr, n := uint32(stack[0]), uint32(stack[1])
	if in == nil || in.runCtx == nil {
		stack[0] = api.EncodeI32(-1)
		return
	}
	if in.calls == nil { // the cell's first host call
		in.calls = newCalls(in.runCtx, in.opts.Call, in.opts.CallBudget)
	}
	if n > maxRequest {
		stack[0] = api.EncodeI32(in.calls.start(nil, 0, "the request is larger than the 16 MiB a host call may carry"))
		return
	}
	// The copy of the request is reserved first, so that calls in flight
	// cannot hold more host memory than the session's budget.
	var reserved int64
	if b := in.calls.budget; b != nil {
		reserved = int64(n)
		if err := b.Reserve(reserved); err != nil {
			stack[0] = api.EncodeI32(in.calls.start(nil, 0, err.Error()))
			return
		}
	}
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		in.calls.release(reserved)
		stack[0] = api.EncodeI32(-1)
		return
	}
	stack[0] = api.EncodeI32(in.calls.start(append([]byte(nil), b...), reserved, ""))
}

func hostCallWait(ctx context.Context, m api.Module, stack []uint64) {
	in, _ := ctx.Value(instKey{}).(*Instance)
	if in == nil || in.calls == nil {
		stack[0] = api.EncodeI32(-2)
		return
	}
	stack[0] = api.EncodeI32(in.waitCall())
}

func hostCallResultLen(ctx context.Context, m api.Module, stack []uint64) {
	in, _ := ctx.Value(instKey{}).(*Instance)
	if in == nil || in.calls == nil {
		stack[0] = 0
		return
	}
	stack[0] = api.EncodeI32(int32(len(in.calls.results[int32(stack[0])].resp)))
}

func hostCallResult(ctx context.Context, m api.Module, stack []uint64) {
	in, _ := ctx.Value(instKey{}).(*Instance)
	if in == nil || in.calls == nil {
		return
	}
	id, dst := int32(stack[0]), uint32(stack[1])
	if f, ok := in.calls.results[id]; ok {
		m.Memory().Write(dst, f.resp)
		delete(in.calls.results, id)
		in.calls.release(f.held)
	}
}

// Nested cells (runtimes.Reentrant). While a cell waits in call_wait (its
// guest is blocked in the host import, inside a C call made from Python
// code, holding the GIL), the host may call the shim's wasmeval_run again
// from that import: for CPython this is a callback from C into Python, as
// a sort key written in Python is. The nested cell runs on the waiting
// cell's thread state and namespace, on a call engine of its own (a fresh
// lookup of the export: each has its own stack). The waiting cell's
// per-cell state of the host (sink, context, host calls, interrupt and
// fuel accounting) is put aside meanwhile and restored after.

// errNestedCrash unwinds a cell in which a nested cell crashed the
// interpreter (a trap, os._exit, a hard stop): the guest's state below the
// nested call cannot be trusted, so the cell it ran inside ends too, and
// the outermost cell rolls back as after its own crash.
var errNestedCrash = errors.New("python: a cell nested in this one stopped the interpreter")

// maxNested bounds nested cells on one guest stack; the sandbox caps
// nesting lower (hostcalls.MaxAgentDepth), this only guards the runtime.
const maxNested = 8

// reentry hands nested cells to the goroutine that runs the instance's cell.
type reentry struct {
	mu     sync.Mutex
	active bool
	ended  chan struct{}   // closed when the running cell ends
	ch     chan *nestedRun // taken by the cell's goroutine in call_wait
	// Used by the cell's goroutine only.
	depth  int   // nested cells on the guest's stack now
	broken error // a nested cell crashed the interpreter
}

// nestedRun is one nested cell, handed to the cell's goroutine.
type nestedRun struct {
	ctx      context.Context
	code     string
	sink     runtimes.Sink
	out      runtimes.Outcome
	finished chan struct{}
}

// begin marks a cell as running (Run).
func (r *reentry) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch == nil {
		r.ch = make(chan *nestedRun)
	}
	r.active, r.ended, r.broken = true, make(chan struct{}), nil
}

// end marks the running cell as ended: nested cells waiting for it are
// told so (runtimes.ErrNoCellWaiting).
func (r *reentry) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active {
		r.active = false
		close(r.ended)
	}
}

var _ runtimes.Reentrant = (*Instance)(nil)

// RunNested implements runtimes.Reentrant.
func (in *Instance) RunNested(ctx context.Context, code string, sink runtimes.Sink) (runtimes.Outcome, error) {
	r := &in.reentry
	r.mu.Lock()
	if !r.active {
		r.mu.Unlock()
		return runtimes.Outcome{}, runtimes.ErrNoCellWaiting
	}
	ended, ch := r.ended, r.ch
	r.mu.Unlock()
	if ctx.Err() != nil {
		return runtimes.Outcome{Failed: true, Interrupted: true}, nil
	}
	req := &nestedRun{ctx: ctx, code: code, sink: sink, finished: make(chan struct{})}
	select {
	case ch <- req:
	case <-ended:
		return runtimes.Outcome{}, runtimes.ErrNoCellWaiting
	case <-ctx.Done():
		return runtimes.Outcome{Failed: true, Interrupted: true}, nil
	}
	<-req.finished
	return req.out, nil
}

// runNested runs a nested cell on the cell's goroutine, inside call_wait.
func (in *Instance) runNested(req *nestedRun) {
	defer close(req.finished)
	if in.reentry.depth >= maxNested {
		req.sink.Stderr(fmt.Sprintf("wasmeval: cells nest at most %d deep in one Python instance\n", maxNested))
		req.out = runtimes.Outcome{Failed: true}
		return
	}
	// In the waiting cell's current wait, for a recording or replay.
	callorder.Entered(req.ctx, int(in.waits))
	// The waiting cell's state, put aside.
	sink, runCtx, calls := in.sink, in.runCtx, in.calls
	interrupted, trippedAt, firstTrip := in.interrupted.Load(), in.trippedAt, in.firstTrip
	fuelStart, fuelBudget, fuelOut := in.fuelStart, in.fuelBudget, in.fuelOut
	// Where its stop comes is counted in its own work, as a cell's
	// (a recording's stop point, a replay's WithInterruptAt).
	interruptAt, tripAt := in.interruptAt, in.tripAt
	checks, sleeps, waits := in.checks, in.sleeps, in.waits

	in.sink, in.runCtx, in.calls = req.sink, req.ctx, nil
	in.interrupted.Store(false)
	in.trippedAt, in.firstTrip = time.Time{}, time.Time{}
	in.fuelOut = false
	in.fuelBudget, _ = runtimes.FuelBudget(req.ctx)
	in.interruptAt, _ = runtimes.InterruptAt(req.ctx)
	in.tripAt, in.checks, in.sleeps, in.waits = runtimes.InterruptPoint{}, 0, 0, 0
	if in.fuel != nil {
		in.fuelStart = in.fuelUsed()
		if in.fuelBudget > 0 {
			in.refill(min(fuelSlice, in.fuelBudget))
		}
	}
	in.reentry.depth++
	// A lookup of its own: the waiting cell's call engine is in use.
	fn := in.mod.ExportedFunction("wasmeval_run")
	rc, err := in.call(req.ctx, fn, []byte(req.code))
	in.reentry.depth--
	stopped := in.interrupted.Load()
	if stopped && err == nil {
		in.clearInterrupt()
	}
	var used int64
	if in.fuel != nil {
		used = in.fuelUsed() - in.fuelStart
	}
	if in.calls != nil {
		in.calls.close()
	}
	out, at := in.fuelOut, in.tripAt

	// The waiting cell's state, back; the nested cell's fuel is its own.
	in.sink, in.runCtx, in.calls = sink, runCtx, calls
	in.interrupted.Store(interrupted)
	in.trippedAt, in.firstTrip = trippedAt, firstTrip
	in.fuelStart, in.fuelBudget, in.fuelOut = fuelStart+used, fuelBudget, fuelOut
	in.interruptAt, in.tripAt = interruptAt, tripAt
	in.checks, in.sleeps, in.waits = checks, sleeps, waits

	if err != nil {
		var what string
		var exit *sys.ExitError
		switch {
		case errors.Is(err, errHardStop):
			what = fmt.Sprintf("the cell ignored its KeyboardInterrupt for %v and was stopped", grace)
		case errors.Is(err, errNestedCrash):
			what = "a cell nested in this one stopped the interpreter"
		case errors.As(err, &exit):
			what = fmt.Sprintf("the Python interpreter exited with status %d (os._exit or a fatal error)", exit.ExitCode())
		default:
			what = fmt.Sprintf("the Python runtime crashed (%v)", trapText(err))
		}
		req.sink.Stderr(fmt.Sprintf("\n%s; this cell ran inside a cell that waited for a host call, which is stopped too (the session's Python state is rolled back to before the outermost cell, or restarted)\n", what))
		in.reentry.broken = err
		req.out = runtimes.Outcome{Failed: true, Interrupted: stopped && !out, FuelExhausted: out, FuelUsed: used, Interrupt: at}
		return
	}
	halted := stopped && rc != 0
	req.out = runtimes.Outcome{Failed: rc != 0, Interrupted: halted && !out, FuelExhausted: halted && out, FuelUsed: used, Interrupt: at}
}
