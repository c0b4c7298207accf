package python_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestStopSleeping: a cell blocked in time.sleep is interrupted too.
func TestStopSleeping(t *testing.T) {
	inst, _ := newInstance(t)
	run(t, inst, "kept = 1")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var r rec
	o, err := inst.Run(ctx, "import time\ntime.sleep(3600)", &r)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Interrupted || !strings.Contains(r.out.String(), "KeyboardInterrupt") {
		t.Fatalf("sleeping cell: %+v %q", o, r.out.String())
	}
	if r2, o := run(t, inst, "kept"); o.Failed || r2.result[0]["text/plain"] != "1" {
		t.Fatalf("state after interrupt: %q", r2.out.String())
	}
}

// TestHardStop: a guest that swallows every KeyboardInterrupt is stopped
// after the grace period, and the session's state is rolled back to the
// checkpoint taken before that cell.
func TestHardStop(t *testing.T) {
	rt := runtimeForTest(t)
	inst, err := rt.NewInstance(context.Background(), runtimes.InstanceOptions{Root: t.TempDir(), Checkpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(context.Background())
	run(t, inst, "kept = [1, 2, 3]")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var r rec
	o, err := inst.Run(ctx, "kept.append(4)\nnew = 1\nwhile True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass", &r)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Failed || !o.Interrupted || !strings.Contains(r.out.String(), "was stopped; the session's Python state was rolled back to before this cell") {
		t.Fatalf("hard stop: %+v %q", o, r.out.String())
	}
	r2, o := run(t, inst, "print('alive'); kept, 'new' in globals()")
	if o.Failed || r2.out.String() != "alive\n" || r2.result[0]["text/plain"] != "([1, 2, 3], False)" {
		t.Fatalf("after hard stop: %+v %q %v", o, r2.out.String(), r2.result)
	}
}

// TestHardStopWithoutCheckpoints: without checkpoints a hard stop restarts
// Python and says the state was lost.
func TestHardStopWithoutCheckpoints(t *testing.T) {
	inst, _ := newInstance(t)
	run(t, inst, "lost = 1")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var r rec
	o, err := inst.Run(ctx, "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass", &r)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Failed || !strings.Contains(r.out.String(), "Python was restarted and the session's Python state was lost") {
		t.Fatalf("hard stop: %+v %q", o, r.out.String())
	}
	if r2, o := run(t, inst, "'lost' in globals()"); o.Failed || r2.result[0]["text/plain"] != "False" {
		t.Fatalf("after hard stop: %+v %q", o, r2.out.String())
	}
}

// TestSpinningGuestLetsGoRun: while a cell spins, other goroutines are
// scheduled and a garbage collection (which stops the world) completes:
// the fuel hook is a safe point. Without it this test hangs.
func TestSpinningGuestLetsGoRun(t *testing.T) {
	inst, _ := newInstance(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cellDone := make(chan runtimes.Outcome, 1)
	go func() {
		var r rec
		o, _ := inst.Run(ctx, "started = True\nwhile True:\n    pass", &r)
		cellDone <- o
	}()
	time.Sleep(100 * time.Millisecond) // let the guest start spinning
	gcDone := make(chan struct{})
	ticks := 0
	go func() {
		for range 20 {
			ticks++
			runtime.Gosched()
		}
		runtime.GC()
		close(gcDone)
	}()
	select {
	case <-gcDone:
	case o := <-cellDone:
		t.Fatalf("the cell ended (%+v) before the GC could complete", o)
	}
	if ticks != 20 {
		t.Fatalf("goroutine ran %d of 20 steps", ticks)
	}
	cancel()
	if o := <-cellDone; !o.Interrupted {
		t.Fatalf("cancelled cell: %+v", o)
	}
}

// TestFuelBudget: a cell with a fuel budget stops when it is used up, at
// the same point on every run, and the session keeps its state.
func TestFuelBudget(t *testing.T) {
	var counts [2]string
	var used [2]int64
	for i := range counts {
		inst, _ := newInstance(t)
		run(t, inst, "kept = 1")
		ctx := runtimes.WithFuelBudget(context.Background(), 50_000_000)
		var r rec
		o, err := inst.Run(ctx, "n = 0\nwhile True:\n    n += 1", &r)
		if err != nil {
			t.Fatal(err)
		}
		if !o.FuelExhausted || o.Interrupted || !strings.Contains(r.out.String(), "KeyboardInterrupt") {
			t.Fatalf("run %d: %+v %q", i, o, r.out.String())
		}
		used[i] = o.FuelUsed
		r2, o := run(t, inst, "print(n, kept)")
		if o.Failed {
			t.Fatal(r2.out.String())
		}
		counts[i] = r2.out.String()
	}
	if counts[0] != counts[1] || used[0] != used[1] {
		t.Fatalf("fuel stops differ between runs: %q (%d fuel) vs %q (%d fuel)", counts[0], used[0], counts[1], used[1])
	}
	// Used fuel includes raising and formatting the KeyboardInterrupt
	// after the budget ran out.
	if used[0] < 50_000_000 || used[0] > 100_000_000 {
		t.Fatalf("used %d fuel for a budget of 50,000,000", used[0])
	}
}
