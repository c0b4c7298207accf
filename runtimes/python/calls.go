package python

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
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
	wg     sync.WaitGroup

	next     int32
	inFlight int
	done     chan finished
	results  map[int32][]byte
}

type finished struct {
	id   int32
	resp []byte
}

func newCalls(ctx context.Context, handle func(context.Context, []byte) []byte) *calls {
	c := &calls{handle: handle, done: make(chan finished, maxInFlight), results: map[int32][]byte{}}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c
}

// close cancels the calls still running when the cell ends and waits for
// them: none outlives its cell.
func (c *calls) close() {
	c.cancel()
	c.wg.Wait()
}

func errorResponse(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": msg}})
	return b
}

func (c *calls) start(req []byte) int32 {
	if c.inFlight >= maxInFlight {
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
		case len(req) > maxRequest:
			resp = errorResponse("the request is larger than the 16 MiB a host call may carry")
		case c.handle == nil:
			resp = errorResponse("this sandbox has no host calls configured")
		default:
			resp = c.handle(c.ctx, req)
		}
		c.done <- finished{id, resp}
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
		c.results[f.id] = f.resp
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
		in.calls = newCalls(in.runCtx, in.opts.Call)
	}
	var req []byte
	if n <= maxRequest {
		b, ok := m.Memory().Read(ptr, n)
		if !ok {
			stack[0] = api.EncodeI32(-1)
			return
		}
		req = append([]byte(nil), b...)
	} else {
		req = make([]byte, n) // only its length is looked at
	}
	stack[0] = api.EncodeI32(in.calls.start(req))
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
	stack[0] = api.EncodeI32(int32(len(in.calls.results[int32(stack[0])])))
}

func hostCallResult(ctx context.Context, m api.Module, stack []uint64) {
	in, _ := ctx.Value(instKey{}).(*Instance)
	if in == nil || in.calls == nil {
		return
	}
	id, dst := int32(stack[0]), uint32(stack[1])
	if resp, ok := in.calls.results[id]; ok {
		m.Memory().Write(dst, resp)
		delete(in.calls.results, id)
	}
}
