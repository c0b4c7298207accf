package python_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/runtimes"
	"github.com/wasmeval/wasmeval/runtimes/python"
	"github.com/wasmeval/wasmeval/wasm"
)

// TestSpinningCellLetsGoRun: on each engine, with a single P, while a cell
// spins in Python code, another goroutine runs and a garbage collection
// (which stops the world) completes before the cell ends, and the cell is
// then stopped by its context. On wazero the fuel hook is what lets them
// (the guest holds its P and no signal can preempt it; the hook yields);
// on wasmtime the hook yields only every few ms (wasm.Compiled.YieldEvery):
// the guest runs in a cgo call, which holds no P. The cell's loop ends by
// itself after some seconds, so a stall fails the test (the GC completes
// only after the cell) instead of hanging it.
func TestSpinningCellLetsGoRun(t *testing.T) {
	for _, engine := range wasm.Engines() {
		t.Run("engine="+engine, func(t *testing.T) {
			spinLetsGoRun(t, engineRuntime(t, engine, false))
		})
	}
}

// spinLetsGoRun is TestSpinningCellLetsGoRun on r.
func spinLetsGoRun(t *testing.T, r *python.Runtime) {
	inst, err := r.NewInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	spinning := make(chan struct{})
	sink := &countSink{onOut: func(string) { once.Do(func() { close(spinning) }) }}
	var cellEnded atomic.Bool
	cellDone := make(chan runtimes.Outcome, 1)
	go func() {
		// 200M iterations: several seconds of CPU on either engine.
		o, err := inst.Run(ctx, "print('spinning', flush=True)\nfor i in range(200_000_000):\n    pass", sink)
		cellEnded.Store(true)
		if err != nil {
			t.Error(err)
		}
		cellDone <- o
	}()
	select {
	case <-spinning:
	case o := <-cellDone:
		t.Fatalf("the cell ended before it spun: %+v", o)
	}
	// Another goroutine runs (it yields between steps) and then stops the
	// world for a collection; both must happen while the cell still spins.
	gcBeforeEnd := make(chan bool, 1)
	go func() {
		for range 20 {
			runtime.Gosched()
		}
		runtime.GC()
		gcBeforeEnd <- !cellEnded.Load()
	}()
	if !<-gcBeforeEnd {
		t.Fatal("the other goroutine's steps and garbage collection completed only after the spinning cell ended")
	}
	cancel()
	select {
	case o := <-cellDone:
		if !o.Interrupted {
			t.Fatalf("the cancelled cell: %+v", o)
		}
	case <-time.After(testenv.Stretch(30 * time.Second)):
		t.Fatal("the cancelled cell did not stop")
	}
}
