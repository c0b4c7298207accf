package js

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// goja allocates on the Go heap with no limit of its own. While a cell runs,
// a watchdog samples the process's heap and interrupts the cell when the live
// heap has grown by more than the session's memory limit since the cell
// started. Live means as of the last garbage collection; each time the heap
// (garbage included) grows by twice the limit without the runtime having
// collected, the watchdog collects itself to decide. The measure is
// approximate and process-wide: cells of other sessions that allocate at the
// same time count too, and garbage that was live at the last collection
// before the cell started counts in the cell's favour, so a limit is a
// safety net for the host, not an exact budget.
//
// Single huge allocations are refused before they happen by the prelude's
// guards (guards.js, and JSON.parse's estimate): the watchdog cannot stop
// native code.

const memCheckInterval = 10 * time.Millisecond

// memoryLimitError is the reason a cell was interrupted for its memory.
type memoryLimitError struct {
	limit, grown int64
}

func (e *memoryLimitError) Error() string {
	return fmt.Sprintf("memory limit exceeded: the heap grew by %d MiB while the cell ran, more than the session's limit of %d MiB",
		e.grown>>20, e.limit>>20)
}

// heapStats returns the bytes of live heap as of the last garbage
// collection, and of all heap objects now (garbage included).
func heapStats() (live, total int64) {
	s := [2]metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = int64(s[0].Value.Uint64())
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		total = int64(s[1].Value.Uint64())
	}
	return live, total
}

// guard interrupts a cell's VM when its context is done or its memory grows
// too much, and only while the cell runs.
type guard struct {
	in *instance
	// vm is the VM of the cell, taken when the guard starts: the
	// instance's may be replaced or closed after the cell, and the guard
	// must never reach that one.
	vm       *goja.Runtime
	mu       sync.Mutex
	active   bool
	fired    bool
	stopCtx  func() bool
	memTimer *time.Timer
	// baseLive is the live heap when the cell started; gcMark is the heap's
	// size then, or after the watchdog's last collection.
	baseLive, gcMark int64
}

func (in *instance) startGuard(ctx context.Context) *guard {
	g := &guard{in: in, vm: in.vm, active: true}
	g.baseLive, g.gcMark = heapStats()
	g.stopCtx = context.AfterFunc(ctx, func() {
		defer recoverGoroutine("interrupt")
		g.interrupt(ctx.Err())
	})
	g.mu.Lock()
	g.memTimer = time.AfterFunc(memCheckInterval, func() {
		defer recoverGoroutine("memory watchdog")
		g.checkMemory()
	})
	g.mu.Unlock()
	return g
}

func (g *guard) interrupt(reason error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.active || g.fired {
		return
	}
	g.fired = true
	g.vm.Interrupt(reason)
}

// recoverGoroutine ends a goroutine of the runtime that panicked instead of
// the process: no panic in one session may end the others.
func recoverGoroutine(what string) {
	if p := recover(); p != nil {
		fmt.Fprintf(os.Stderr, "js: %s panicked: %v\n%s", what, p, debug.Stack())
	}
}

func (g *guard) checkMemory() {
	limit := g.in.memLimit
	live, total := heapStats()
	if total-g.gcMark > 2*limit && live-g.baseLive <= limit {
		// Much garbage, or much live data the runtime has not seen yet.
		runtime.GC()
		live, g.gcMark = heapStats()
	}
	if grown := live - g.baseLive; grown > limit {
		g.interrupt(&memoryLimitError{limit: limit, grown: grown})
		return
	}
	g.mu.Lock()
	if g.active {
		g.memTimer.Reset(memCheckInterval)
	}
	g.mu.Unlock()
}

// stop ends the guard; after it returns, nothing interrupts the VM.
func (g *guard) stop() {
	g.stopCtx()
	g.mu.Lock()
	g.active = false
	g.memTimer.Stop()
	g.mu.Unlock()
	g.vm.ClearInterrupt()
}
