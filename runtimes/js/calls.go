package js

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// maxCallsInFlight caps a cell's host calls at once, as the Python
// runtime does.
const maxCallsInFlight = 64

// hostCalls are the host calls of one running cell. Each runs on a
// goroutine of its own; its answer comes back to the event loop through
// done, where the cell's goroutine settles the call's promise. None
// outlives its cell.
type hostCalls struct {
	ctx     context.Context
	cancel  context.CancelFunc
	pending int
	started bool // a call was made
	done    chan callDone
	wg      sync.WaitGroup
	order   callOrder // a recorded or replayed cell's (record.go)
}

type callDone struct {
	resolve func(any) error
	resp    string
	ticket  *CallTicket // under WithCallOrder (record.go)
}

func newHostCalls(ctx context.Context) *hostCalls {
	c := &hostCalls{done: make(chan callDone), order: newCallOrder(ctx)}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c
}

// close cancels the calls still running and waits for them.
func (c *hostCalls) close() {
	c.cancel()
	if !c.started {
		return // nothing to wait for
	}
	go func() { c.wg.Wait(); close(c.done) }()
	for d := range c.done {
		c.order.drained(d)
	}
	c.order.end() // record.go
	c.pending = 0
}

func errorJSON(msg string) string {
	return `{"error":{"message":` + quoteJSON(msg) + `}}`
}

// hostCall is host.call(requestJSON): a promise of the JSON response.
func (in *instance) hostCall(call goja.FunctionCall) goja.Value {
	req := call.Argument(0).String()
	p, resolve, _ := in.vm.NewPromise()
	c := in.calls
	switch {
	case c == nil:
		_ = resolve(errorJSON("host calls are only possible while a cell runs"))
	case in.opts.Call == nil:
		_ = resolve(errorJSON("this sandbox has no host calls configured"))
	case c.pending >= maxCallsInFlight:
		_ = resolve(errorJSON("too many host calls are in flight at once (the cap is 64); lower parallel's concurrency"))
	default:
		// The host's copies of the request (and of its answer, until the
		// event loop takes it) count against the session's budget for
		// calls in flight, so that many calls of a large request cannot
		// make the host hold many copies.
		budget := in.opts.CallBudget
		reserved := 2 * int64(len(req))
		if budget != nil {
			if err := budget.Reserve(reserved); err != nil {
				_ = resolve(errorJSON(err.Error()))
				return in.vm.ToValue(p)
			}
		}
		c.pending++
		c.started = true
		c.wg.Add(1)
		ctx, ticket := c.order.ticket(c.ctx) // record.go
		go func() {
			defer c.wg.Done()
			resp := callHost(ctx, in.opts.Call, req)
			var held int64
			if budget != nil {
				budget.Release(reserved)
				held = min(int64(len(resp)), budget.Max())
				if err := budget.Acquire(ctx, held); err != nil {
					held, resp = 0, errorJSON("the cell ended before the answer could be kept")
				}
			}
			c.done <- callDone{resolve: resolve, resp: resp, ticket: ticket}
			if budget != nil {
				budget.Release(held)
			}
		}()
	}
	return in.vm.ToValue(p)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// callHost makes one host call; a panic in the host's code answers the call
// with an error instead of ending the process.
func callHost(ctx context.Context, call func(context.Context, []byte) []byte, req string) (resp string) {
	defer func() {
		if p := recover(); p != nil {
			// The panic's text stays on the host: it may name host details.
			fmt.Fprintf(os.Stderr, "js: a host call panicked: %v\n%s", p, debug.Stack())
			resp = errorJSON("the host call failed with an internal error")
		}
	}()
	return string(call(ctx, []byte(req)))
}
