package python

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/wasmeval/wasmeval/hostcalls"
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
}

type finished struct {
	id   int32
	resp []byte
	held int64 // bytes of budget held for resp until the guest has it
}

func newCalls(ctx context.Context, handle func(context.Context, []byte) []byte, budget *hostcalls.CallBudget) *calls {
	c := &calls{handle: handle, budget: budget, done: make(chan finished, maxInFlight), results: map[int32]finished{}}
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
			c.release(f.held)
			continue
		default:
		}
		break
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
	go func() {
		defer c.wg.Done()
		var resp []byte
		switch {
		case refusal != "":
			resp = errorResponse(refusal)
		case c.handle == nil:
			resp = errorResponse("this sandbox has no host calls configured")
		default:
			resp = c.handle(c.ctx, req)
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
		c.done <- finished{id, resp, held}
	}()
	return id
}

// wait blocks until a call finishes (its id) or the cell's context is done
// (-1, after tripping the interrupt so the guest raises KeyboardInterrupt).
func (in *Instance) waitCall() int32 {
	c := in.calls
	if c.inFlight == 0 {
		return -2
	}
	select {
	case f := <-c.done:
		c.inFlight--
		// The shim takes each answer right after its wait; one still here
		// was orphaned (taking it failed, e.g. MemoryError) and is dropped.
		for id, old := range c.results {
			c.release(old.held)
			delete(c.results, id)
		}
		c.results[f.id] = f
		return f.id
	case <-in.runCtx.Done():
		if !in.interrupted.Load() {
			in.firstTrip = time.Now()
			in.trip(in.firstTrip)
		}
		return -1
	}
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
