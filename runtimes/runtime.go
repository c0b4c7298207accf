// Package runtimes defines the contract every language backend of wasmeval
// implements (CPython-WASI, goja, ...). It is implementation detail of the
// sandbox package: import sandbox, not this.
//
// A Runtime is compiled or prepared once per Sandbox and makes one Instance
// per session and language. An Instance keeps the language's state (globals,
// declarations) from cell to cell. Running a cell streams what the cell
// produces to a Sink as it happens; the sandbox turns those events into the
// cell result of DESIGN.md.
package runtimes

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
)

// Runtime is one language backend, shared by all sessions of a Sandbox.
type Runtime interface {
	// Language is the request's language tag: "py" or "js".
	Language() string
	// NewInstance starts the language's state for one session.
	NewInstance(ctx context.Context, opts InstanceOptions) (Instance, error)
	// Close frees what the runtime holds (compiled code, caches).
	Close(ctx context.Context) error
}

// InstanceOptions configure one session's instance of a runtime.
type InstanceOptions struct {
	// Root is the absolute host path of the session root. It is the guest's
	// working directory and is visible to the guest at the same path.
	Root string
	// Env is the guest's environment: the session's own, never the host's.
	Env map[string]string
	// Now is the wall clock the guest sees; nil means time.Now.
	Now func() time.Time
	// Nanotime is the guest's monotonic clock in nanoseconds, where the
	// runtime has one of its own (Python's time.monotonic); nil means the
	// host's. Runtimes without one derive it from Now.
	Nanotime func() int64
	// Rand is the guest's source of randomness; nil means crypto/rand.
	Rand io.Reader
	// Sleep, when set, is offered each of the guest's sleeps (ns
	// nanoseconds) before the runtime waits; when it returns true the
	// sleep is done (a virtual clock moved on by it) and the runtime does
	// not wait. Nil means real sleeps. Python only for now.
	Sleep func(ns int64) bool
	// MemoryLimitBytes caps the guest's memory where the runtime can; zero
	// means the runtime's default.
	MemoryLimitBytes int64
	// Checkpoints keeps a copy of the instance's state between cells, so
	// that a cell the runtime must stop hard (it ignores its interrupt, or
	// the interpreter traps) rolls back to the state before it instead of
	// losing the language state. It costs a copy of the pages each cell
	// wrote, taken in the background between cells (Python: tens of µs
	// for a trivial cell; about 0.1 ms per MiB of all the state's written
	// pages where the kernel cannot track writes).
	Checkpoints bool
	// Call answers the guest's host calls (the helpers: files, tool, llm,
	// agent, ...): request and response are JSON, as the hostcalls package
	// defines them. The runtime may run several calls at once, each on its
	// own goroutine; ctx ends with the cell. Nil means every call fails
	// with a message saying that the host offers none.
	Call func(ctx context.Context, request []byte) []byte
	// DiskQuota is the session's disk quota, shared with its file helpers
	// (the Dispatcher's): a runtime whose guest writes files directly
	// records every change there and refuses one past it (ENOSPC). Nil
	// means no quota.
	DiskQuota *hostcalls.DiskQuota
	// CallBudget bounds the host memory the runtime holds for the guest's
	// host calls in flight: a runtime reserves a call's request before
	// copying it out of the guest (refusing the call when the budget is
	// spent), and holds room for the answer until the guest has taken it
	// (see hostcalls.CallBudget). Nil means no bound.
	CallBudget *hostcalls.CallBudget
}

// Instance is one session's state in one language. Its methods are not safe
// for concurrent use: the sandbox runs one cell of a session at a time.
type Instance interface {
	// Run runs one cell. Output goes to sink while the cell runs. A failure
	// of the cell's code is reported in the Outcome, not as an error; an
	// error means the host could not run the cell. When ctx is done the
	// runtime interrupts the cell and returns with Outcome.Interrupted set;
	// the instance stays usable.
	Run(ctx context.Context, code string, sink Sink) (Outcome, error)
	// Reset discards the language state and starts afresh (the prelude is
	// loaded again).
	Reset(ctx context.Context) error
	// Close frees the instance.
	Close(ctx context.Context) error
}

// Reentrant is an Instance that can run a cell inside the cell it is
// running, while that cell waits for a host call (its guest's agent() or
// tool(), whose host evaluates code in the same session): the nested cell
// runs on the waiting cell's state, and what it defines is there when the
// host call returns.
type Reentrant interface {
	// RunNested runs code as Run does, inside the instance's running cell.
	// It may be called from any goroutine while Run runs: it waits until
	// the running cell (or a cell nested in it) waits for a host call and
	// runs code there. It returns ErrNoCellWaiting when no cell runs, or
	// when the running cell ends before it took the code; when ctx ends
	// first, the Outcome says Interrupted.
	RunNested(ctx context.Context, code string, sink Sink) (Outcome, error)
}

// GuestPATH is the PATH of a session's default environment: a fixed,
// conventional value, never the host's, whose folders would tell the guest
// about the host (issue 9: no host configuration reaches the guest). A
// Jupyter kernel, which runs the host's programs, keeps the host's PATH
// instead (runtimes/jupyter).
const GuestPATH = "/usr/local/bin:/usr/bin:/bin"

// ErrNoCellWaiting is RunNested's error when the instance runs no cell that
// could take the nested one.
var ErrNoCellWaiting = errors.New("runtimes: no cell of the instance is running")

// Forker is an Instance that can copy itself: the copy starts with the
// same language state (globals, imports) and goes its own way. opts give
// the copy's session (its root, env).
type Forker interface {
	Fork(ctx context.Context, opts InstanceOptions) (Instance, error)
}

// Outcome says how a cell ended.
type Outcome struct {
	// Failed is true when the cell raised or threw. The error text (a
	// traceback or an error with its stack) has already gone to the sink's
	// Stderr.
	Failed bool
	// Interrupted is true when the cell was stopped because its context was
	// done (timeout or cancellation). Failed is true too.
	Interrupted bool
	// FuelExhausted is true when the cell was stopped because it used up
	// the fuel budget its context carried (WithFuelBudget). Failed is true
	// too.
	FuelExhausted bool
	// FuelUsed is the fuel the cell consumed, for runtimes that meter it
	// (zero otherwise). It is deterministic: the same cell in the same
	// state uses the same fuel on every run and machine.
	FuelUsed int64
	// Interrupt is, for a cell whose context ended while it ran, where
	// the runtime delivered the interrupt, where it meters fuel (zero
	// otherwise): what a replay gives WithInterruptAt to stop the cell at
	// the same point.
	Interrupt InterruptPoint
}

// InterruptPoint is where a runtime delivered a cell's interrupt, in terms
// that repeat on every run of the same cell in the same state.
type InterruptPoint struct {
	// Checks is how many fuel checks (the runtime's periodic safe points)
	// the cell had reached when the interrupt came at one; zero when it
	// came during a sleep.
	Checks int64
	// Sleeps is how many sleeps the cell had begun when the interrupt came
	// during one (that one included); zero when it came at a check.
	Sleeps int64
	// Waits is how many waits for host calls' answers the cell had begun
	// when the interrupt came during one (that one included); zero when
	// it came at a check or in a sleep.
	Waits int64
	// Fuel is the fuel the cell had used then (for the record: it varies
	// a little with the length of the session root's path).
	Fuel int64
}

// IsZero says whether p names no point.
func (p InterruptPoint) IsZero() bool { return p == InterruptPoint{} }

type interruptKey struct{}

// WithInterruptAt returns a context whose cell the runtime interrupts, as
// if the context had ended, at p, where the runtime meters fuel: a
// recorded timeout replayed at the same point of the guest's work
// (Outcome.Interrupt).
func WithInterruptAt(ctx context.Context, p InterruptPoint) context.Context {
	return context.WithValue(ctx, interruptKey{}, p)
}

// InterruptAt returns the point set by WithInterruptAt, if any.
func InterruptAt(ctx context.Context) (InterruptPoint, bool) {
	p, ok := ctx.Value(interruptKey{}).(InterruptPoint)
	return p, ok && !p.IsZero()
}

type fuelKey struct{}

// WithFuelBudget returns a context that limits a cell run with it to units
// of fuel, where the runtime meters fuel (CPython: one unit per wasm
// instruction on straight-line paths, counted at function entries and
// loop headers). Past it the cell is stopped as if interrupted, at a point
// that is the same on every run.
func WithFuelBudget(ctx context.Context, units int64) context.Context {
	return context.WithValue(ctx, fuelKey{}, units)
}

// FuelBudget returns the budget set by WithFuelBudget, if any.
func FuelBudget(ctx context.Context) (int64, bool) {
	n, ok := ctx.Value(fuelKey{}).(int64)
	return n, ok && n > 0
}

// Bundle is a display bundle: MIME type to data. Text types hold text,
// "image/png" holds base64, "application/json" holds JSON text.
type Bundle map[string]string

// Sink receives what a cell produces, in order. Its methods are called from
// the goroutine that called Run.
type Sink interface {
	// Stdout and Stderr receive output text as it is written.
	Stdout(text string)
	Stderr(text string)
	// Display receives a display() call's bundle, or, with result set, the
	// rendering of the cell's last expression value.
	Display(b Bundle, result bool)
	// Status receives a status event (log, phase, progress).
	Status(kind, message string)
}

// Sizer is an Instance that can tell the host memory it holds and give
// some back while idle.
type Sizer interface {
	// ResidentBytes is the host memory the instance holds now: its written
	// guest pages, checkpoint copies and host-side buffers.
	ResidentBytes() int64
	// Trim gives back what it can while the instance is idle (freed guest
	// pages, checkpoint copies), and returns ResidentBytes after it.
	Trim(ctx context.Context) int64
}
