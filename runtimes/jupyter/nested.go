package jupyter

import (
	"context"
	_ "embed"
	"encoding/json"
	"sync"

	"github.com/wasmeval/wasmeval/runtimes"
)

// Nested evals: while a cell waits in agent() or tool(), the sandbox may
// run a sub-agent's cell of the same session inside it
// (runtimes.Reentrant). The kernel is busy executing the waiting cell, so
// the nested code cannot be an execute_request of its own (the kernel
// would queue it behind the cell that waits for it). It travels the way
// the helpers' host calls already do, over the stdin channel, which works
// for local kernels and a Jupyter Server's alike: the waiting cell's
// helpers ask the host, in a loop, for their calls' answers ({"op":
// "wait"}); the host answers one such ask with [-3, code] instead, the
// kernel runs the code in the user's namespace (nested.py) and answers
// {"op": "nested_done", "result": ...} with the code's output, then
// waits again. The output comes in that one answer, not on iopub, so
// none of it can arrive after it on the kernel's other channel.
//
// A nested cell whose context ends (its timeout, the waiting cell's end)
// returns at once as interrupted, but the kernel is not interrupted: an
// interrupt that landed just after the code ended would stop the waiting
// cell instead. The kernel finishes the code before the waiting cell goes
// on; the waiting cell's own timeout interrupts both.

//go:embed nested.py
var nestedSource string

// nestedJSON is nestedSource as JSON text, which the bootstrap decodes.
var nestedJSON = func() string {
	b, _ := json.Marshal(nestedSource)
	return string(b)
}()

// nestedCode is the answer to a wait that carries nested code.
const nestedCode = -3

// nestedRun is a nested cell on its way to the kernel and back.
type nestedRun struct {
	code string
	ctx  context.Context
	sink runtimes.Sink
	done chan runtimes.Outcome // buffered: the handler never waits on it
	// stdinAsked is set when the nested code asked for input.
	stdinAsked bool
	// mu guards sink against RunNested's return: once abandoned (the
	// nested cell ended without its answer), nothing more is written to
	// the finished cell's sink.
	mu        sync.Mutex
	abandoned bool
}

// abandon marks n ended by RunNested, and returns its outcome when it
// came meanwhile.
func (n *nestedRun) abandon() (runtimes.Outcome, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.abandoned = true
	select {
	case out := <-n.done:
		return out, true
	default:
		return runtimes.Outcome{}, false
	}
}

// nestedResult is nested.py's answer.
type nestedResult struct {
	OK     bool                `json:"ok"`
	Events [][]json.RawMessage `json:"events"`
}

var _ runtimes.Reentrant = (*instance)(nil)

// RunNested implements runtimes.Reentrant: it hands code to the running
// cell's handler, which gives it to the kernel at the cell's next wait
// for a host call, and returns the code's outcome.
func (i *instance) RunNested(ctx context.Context, code string, sink runtimes.Sink) (runtimes.Outcome, error) {
	i.mu.Lock()
	h := i.cell
	i.mu.Unlock()
	if h == nil {
		return runtimes.Outcome{}, runtimes.ErrNoCellWaiting
	}
	interrupted := runtimes.Outcome{Failed: true, Interrupted: true}
	n := &nestedRun{code: code, ctx: ctx, sink: sink, done: make(chan runtimes.Outcome, 1)}
	select {
	case h.nested <- n:
	case <-h.stopped:
		return runtimes.Outcome{}, runtimes.ErrNoCellWaiting
	case <-ctx.Done():
		return interrupted, nil
	}
	select {
	case out := <-n.done:
		return out, nil
	case <-h.stopped:
	case <-ctx.Done():
	}
	if out, ok := n.abandon(); ok {
		return out, nil
	}
	return interrupted, nil
}

// startNested is the answer to the waiting cell's ask that carries n.
func (h *cellHandler) startNested(n *nestedRun) string {
	h.nest = append(h.nest, n)
	b, _ := json.Marshal([]any{nestedCode, n.code})
	return string(b)
}

// finishNested takes nested.py's answer for the innermost nested run:
// its output goes to the run's sink, its outcome to RunNested.
func (h *cellHandler) finishNested(result string) {
	if len(h.nest) == 0 {
		return
	}
	n := h.nest[len(h.nest)-1]
	h.nest = h.nest[:len(h.nest)-1]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.abandoned {
		return
	}
	var r nestedResult
	if err := json.Unmarshal([]byte(result), &r); err != nil {
		n.sink.Stderr("the nested cell's result could not be read: " + err.Error() + "\n")
		n.done <- runtimes.Outcome{Failed: true}
		return
	}
	for _, ev := range r.Events {
		if len(ev) != 2 {
			continue
		}
		var kind string
		if json.Unmarshal(ev[0], &kind) != nil {
			continue
		}
		switch kind {
		case "stdout", "stderr":
			var text string
			if json.Unmarshal(ev[1], &text) != nil {
				continue
			}
			if kind == "stdout" {
				n.sink.Stdout(text)
			} else {
				n.sink.Stderr(text)
			}
		case "display", "result":
			var data map[string]json.RawMessage
			if json.Unmarshal(ev[1], &data) != nil {
				continue
			}
			n.sink.Display(bundle(data), kind == "result")
		}
	}
	n.done <- runtimes.Outcome{Failed: !r.OK || n.stdinAsked}
}

// innermost is the nested run the kernel is running, or nil.
func (h *cellHandler) innermost() *nestedRun {
	if len(h.nest) == 0 {
		return nil
	}
	return h.nest[len(h.nest)-1]
}
