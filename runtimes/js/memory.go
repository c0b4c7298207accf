package js

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// goja allocates on the Go heap with no limit of its own. While a cell runs,
// a watchdog samples the process's heap and interrupts the cell when the heap
// has grown by more than the session's memory limit since the cell started,
// counting only live memory (it collects garbage before it decides). The
// measure is process-wide: cells of other sessions that allocate at the same
// time count too, so a limit is a safety net for the host, not an exact
// budget.
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

func heapBytes() int64 {
	s := [1]metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// guard interrupts a cell's VM when its context is done or its memory grows
// too much, and only while the cell runs.
type guard struct {
	in       *instance
	mu       sync.Mutex
	active   bool
	fired    bool
	baseline int64
	stopCtx  func() bool
	memTimer *time.Timer
}

func (in *instance) startGuard(ctx context.Context) *guard {
	g := &guard{in: in, active: true, baseline: heapBytes()}
	g.stopCtx = context.AfterFunc(ctx, func() { g.interrupt(ctx.Err()) })
	g.mu.Lock()
	g.memTimer = time.AfterFunc(memCheckInterval, g.checkMemory)
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
	g.in.vm.Interrupt(reason)
}

func (g *guard) checkMemory() {
	grown := heapBytes() - g.baseline
	if grown > g.in.memLimit {
		// Garbage counts until it is collected: decide on live memory.
		runtime.GC()
		if grown = heapBytes() - g.baseline; grown > g.in.memLimit {
			g.interrupt(&memoryLimitError{limit: g.in.memLimit, grown: grown})
			return
		}
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
	g.in.vm.ClearInterrupt()
}
