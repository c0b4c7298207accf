package fuel_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/wasmeval/wasmeval/wasm/fuel"
)

var errStop = errors.New("stop the guest")

const spinChildEnv = "WASMEVAL_FUEL_SPIN_CHILD"

// foreverModule exports forever(): loop br 0 end. Entry 1, then 1 per iteration.
var foreverModule = module(
	commonTypes, hookImport,
	sec(3, vec(u(0))),
	sec(7, vec(export("forever", 0, 1))),
	sec(10, vec(body(nil, opLoop, empty, opBr, 0, opEnd, opEnd))),
)

func TestHookStopsInfiniteLoop(t *testing.T) {
	const k, slice = 50, 1000
	mt := &meter{slice: slice}
	mt.onHook = func(context.Context, api.Module) {
		if mt.calls.Load() == k {
			panic(errStop)
		}
	}
	rt := newRuntime(t, mt, 0)
	m := instantiate(t, rt, mustInstrument(t, foreverModule, fuel.Options{}))
	_, err := m.ExportedFunction("forever").Call(context.Background())
	if !errors.Is(err, errStop) {
		t.Fatalf("forever() returned %v, want %v", err, errStop)
	}
	if got := mt.calls.Load(); got != k {
		t.Errorf("hook called %d times, want %d", got, k)
	}
	// Deterministic: the k-th call came when consumption first exceeded
	// (k-1) slices, and the refill ran before the panic.
	if got, want := fuelLeft(m), int64(slice-1); got != want {
		t.Errorf("fuel left %d, want %d", got, want)
	}
}

// A host that checks its context in the hook turns a deadline into an
// error that satisfies errors.Is(err, context.DeadlineExceeded).
func TestHookEnforcesDeadline(t *testing.T) {
	mt := &meter{slice: 100_000}
	mt.onHook = func(ctx context.Context, _ api.Module) {
		if err := ctx.Err(); err != nil {
			panic(err)
		}
	}
	rt := newRuntime(t, mt, 0)
	m := instantiate(t, rt, mustInstrument(t, foreverModule, fuel.Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := m.ExportedFunction("forever").Call(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("forever() returned %v, want a deadline error", err)
	}
	// The instance stays usable: a second call runs until its own deadline.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	if _, err := m.ExportedFunction("forever").Call(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second forever() returned %v, want a deadline error", err)
	}
}

// DESIGN.md, known hazards: a guest spinning without host calls blocks Go's
// stop-the-world, so runtime.GC and every goroutine stall. With the hook
// yielding, GC completes and other goroutines run while the guest spins,
// even on a single P.
//
// Without the hook the whole process stalls, timers included, so the test
// runs in a child process that the parent kills after a deadline: a
// regression fails instead of hanging the test run.
func TestSpinningGuestLetsGoRun(t *testing.T) {
	if os.Getenv(spinChildEnv) == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSpinningGuestLetsGoRun$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), spinChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("the child stalled while its guest spun (killed after 2 minutes):\n%s", out)
		}
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestSpinningGuestLetsGoRun") {
			t.Fatalf("child did not run the test:\n%s", out)
		}
		return
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))

	var stop atomic.Bool
	mt := &meter{slice: 10_000}
	mt.onHook = func(context.Context, api.Module) {
		if stop.Load() {
			panic(errStop)
		}
		runtime.Gosched()
	}
	rt := newRuntime(t, mt, 0)
	m := instantiate(t, rt, mustInstrument(t, foreverModule, fuel.Options{}))
	done := make(chan error, 1)
	go func() {
		_, err := m.ExportedFunction("forever").Call(context.Background())
		done <- err
	}()
	finished := false
	defer func() {
		if !finished {
			stop.Store(true)
			<-done
		}
	}()

	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: still waiting after a minute", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	wait("guest start", func() bool { return mt.calls.Load() > 0 })

	var ticks atomic.Int64
	go func() {
		for !stop.Load() {
			ticks.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()
	wait("another goroutine", func() bool { return ticks.Load() >= 10 })

	gcDone := make(chan struct{})
	go func() {
		for range 3 {
			runtime.GC()
		}
		close(gcDone)
	}()
	select {
	case <-gcDone:
	case <-time.After(time.Minute):
		t.Fatal("runtime.GC did not complete while the guest spins")
	}
	select {
	case err := <-done:
		t.Fatalf("the guest stopped on its own: %v", err)
	default:
	}
	before := mt.calls.Load()
	wait("the guest to keep running", func() bool { return mt.calls.Load() > before })

	stop.Store(true)
	err := <-done
	finished = true
	if !errors.Is(err, errStop) {
		t.Errorf("forever() returned %v, want %v", err, errStop)
	}
}
