package js

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/internal/goja"

	"github.com/wasmeval/wasmeval/runtimes"
)

// Nested cells (runtimes.Reentrant). While a cell waits in its event loop
// for a timer or a host call (an agent() or tool() promise), the VM is at
// rest: no JavaScript is on goja's stack and its job queue is empty. A
// nested cell handed to the instance then runs on the cell's goroutine,
// between the waiting cell's jobs, on the same VM and globals, with a loop
// of its own (its own host calls; the session's timers, which may fire for
// either). When it ends, the waiting cell's loop goes on.

// maxNested bounds nested cells on one VM; the sandbox caps nesting lower
// (hostcalls.MaxAgentDepth), this only guards the runtime.
const maxNested = 8

// errNestedStopped interrupts a nested cell whose context ended.
var errNestedStopped = errors.New("js: the nested cell was stopped")

// reentry hands nested cells to the goroutine that runs the instance's cell.
type reentry struct {
	mu     sync.Mutex
	active bool
	ended  chan struct{}   // closed when the running cell ends
	ch     chan *nestedRun // taken by the cell's loop while it waits
	depth  int             // nested cells running now (cell goroutine only)
}

// nestedRun is one nested cell, handed to the cell's goroutine.
type nestedRun struct {
	ctx      context.Context
	code     string
	sink     runtimes.Sink
	out      runtimes.Outcome
	err      error
	finished chan struct{}
}

func (r *reentry) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch == nil {
		r.ch = make(chan *nestedRun)
	}
	r.active, r.ended = true, make(chan struct{})
}

func (r *reentry) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active {
		r.active = false
		close(r.ended)
	}
}

var _ runtimes.Reentrant = (*instance)(nil)

// RunNested implements runtimes.Reentrant.
func (in *instance) RunNested(ctx context.Context, code string, sink runtimes.Sink) (runtimes.Outcome, error) {
	r := &in.reentry
	r.mu.Lock()
	if !r.active {
		r.mu.Unlock()
		return runtimes.Outcome{}, runtimes.ErrNoCellWaiting
	}
	ended, ch := r.ended, r.ch
	r.mu.Unlock()
	if sink == nil {
		sink = discardSink{}
	}
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
	return req.out, req.err
}

// runNested runs a nested cell on the waiting cell's goroutine, which
// holds vmMu and its thread.
func (c *cellRun) runNested(req *nestedRun) {
	in := c.in
	defer close(req.finished)
	if in.reentry.depth >= maxNested {
		req.sink.Stderr(fmt.Sprintf("wasmeval: cells nest at most %d deep in one JavaScript session\n", maxNested))
		req.out = runtimes.Outcome{Failed: true}
		return
	}
	start := time.Now()
	// Named and typed (TypeScript under req.ctx) as a cell of its own.
	cell, cerr := in.compileRun(req.ctx, req.code)
	if cerr != nil {
		req.sink.Stderr(cerr.render())
		req.out = runtimes.Outcome{Failed: true}
		return
	}
	sink, calls, rejections := in.sink, in.calls, in.rejections
	in.sink, in.calls, in.rejections = req.sink, newHostCalls(req.ctx), nil
	in.reentry.depth++
	// The nested cell's own context interrupts the VM; the waiting cell's
	// guard (its memory limit, its context) stays in charge too.
	var mu sync.Mutex
	armed := true
	stop := context.AfterFunc(req.ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if armed {
			in.vm.Interrupt(errNestedStopped)
		}
	})
	nc := &cellRun{in: in, ctx: req.ctx, start: start, guard: c.guard}
	out := nc.runNestedGuarded(cell)
	mu.Lock()
	armed = false
	mu.Unlock()
	stop()
	in.reentry.depth--
	in.calls.close()
	in.sink, in.calls, in.rejections = sink, calls, rejections
	if nc.uncatchable {
		in.vm.ClearInterrupt()
		if !in.vmRunsJobs() {
			if err := resetVM(in.vm); err != nil || !in.vmRunsJobs() {
				// The waiting cell cannot go on on this VM: its guard stops
				// it, and its Run starts a fresh VM.
				req.err = fmt.Errorf("js: the nested cell left the VM unusable: %v", err)
				c.guard.interrupt(errNestedStopped)
			}
		}
		if _, err := in.hooks.resetGuards(goja.Undefined()); err != nil && req.err == nil {
			req.err = fmt.Errorf("js: reset guards: %w", err)
		}
		// The waiting cell's own stop, if it came meanwhile, stands.
		c.guard.rearm()
	}
	req.out = out
}

// runNestedGuarded is runGuarded for a nested cell: the waiting cell's
// goroutine already holds its thread and guard.
func (c *cellRun) runNestedGuarded(cell *compiledCell) (out runtimes.Outcome) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "js: a nested cell panicked: %v\n%s", p, debug.Stack())
			c.uncatchable = true
			out = runtimes.Outcome{Failed: true}
			c.in.sink.Stderr("Internal error: the JavaScript runtime failed and the cell was stopped; the session is kept\n")
		}
	}()
	return c.run(cell)
}
