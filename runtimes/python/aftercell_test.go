package python_test

import (
	"context"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/runtimes/python"
)

// TestAfterWorkInlineBackToBack: cells run back to back do the work
// between cells (the trim and the checkpoint) at the start of the next
// cell, on the caller's goroutine, once per cell, instead of handing it to
// a goroutine of its own and waiting for it (which cost ~13 µs of CPU a
// trivial cell); the checkpoint still holds the session's memory.
func TestAfterWorkInlineBackToBack(t *testing.T) {
	for _, ckpt := range []bool{false, true} {
		inst := newExitInstance(t, ckpt, nil)
		i0, t0, pending0 := python.AfterWorkForTest(inst)
		const n = 40
		for range n {
			mustRun(t, inst, "x = 1")
		}
		inline, timed, pending := python.AfterWorkForTest(inst)
		inline, timed = inline-i0, timed-t0
		if !pending && timed == 0 {
			t.Fatalf("checkpoints %v: no work pending after the last cell", ckpt)
		}
		// Once per cell, and once for the instance's start when that was
		// still pending.
		done, want := inline+timed, n
		if pending {
			done++
		}
		if pending0 {
			want++
		}
		if done != want {
			t.Fatalf("checkpoints %v: %d cells, work done %d times inline, %d by the timer, pending %v", ckpt, n, inline, timed, pending)
		}
		// A pause of a few ms between two cells would let the timer do
		// some; on a loaded machine that is rare, not never.
		if inline < n/2 {
			t.Fatalf("checkpoints %v: of %d cells back to back, only %d did the work inline (%d by the timer)", ckpt, n, inline, timed)
		}
		if ckpt {
			if err := python.VerifyCheckpointForTest(inst); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestAfterWorkByTimer: a session left idle after a cell gets its work
// between cells done by the timer, off the next cell's path.
func TestAfterWorkByTimer(t *testing.T) {
	inst := newExitInstance(t, true, nil)
	mustRun(t, inst, "x = 1")
	_, t0, _ := python.AfterWorkForTest(inst)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, timed, pending := python.AfterWorkForTest(inst)
		if timed > t0 && !pending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the timer did not do the work within 10 s (timed %d, pending %v)", timed, pending)
		}
		time.Sleep(time.Millisecond)
	}
	i0, t1, _ := python.AfterWorkForTest(inst)
	if err := python.VerifyCheckpointForTest(inst); err != nil {
		t.Fatal(err)
	}
	if i1, t2, _ := python.AfterWorkForTest(inst); i1 != i0 || t2 != t1 {
		t.Fatalf("the work was done again: inline %d -> %d, timed %d -> %d", i0, i1, t1, t2)
	}
	// Close right after a cell drops its pending work rather than doing it.
	mustRun(t, inst, "y = 2")
	inst.Close(context.Background())
	if _, _, pending := python.AfterWorkForTest(inst); pending {
		t.Fatal("work still pending after Close")
	}
}

// TestAfterTimerQuietBackToBack: while cells come back to back, each doing
// the last one's work between cells inline, no cell leaves the after-cell
// timer set to fire less than half its delay after it (it fired every
// delay, a goroutine and a thread woken each time to find the work done:
// issue 15), nor later than the work is due (a session left idle still
// gets it within the delay: TestAfterWorkByTimer).
func TestAfterTimerQuietBackToBack(t *testing.T) {
	inst := newExitInstance(t, true, nil)
	mustRun(t, inst, "x = 1")
	i0, t0, _ := python.AfterWorkForTest(inst)
	// Cells for a while: long enough that a timer left where the first
	// cell set it would be due many times over.
	start, n := time.Now(), 0
	for ; n < 50 || time.Since(start) < 20*python.AfterDelay; n++ {
		mustRun(t, inst, "x = 1")
		fired, armed, late := python.AfterTimerForTest(inst)
		if !armed {
			// Only once the timer has done the work: a pause of a
			// delay since the cell (a loaded machine).
			if _, _, pending := python.AfterWorkForTest(inst); pending {
				t.Fatalf("cell %d: work pending and no timer set", n)
			}
			continue
		}
		if late > 0 {
			t.Fatalf("cell %d: the timer fires %v after the work is due", n, late)
		}
		if late < -python.AfterDelay/2 {
			t.Fatalf("cell %d: the timer fires %v before the work is due, more than half the delay (fired %d times)", n, -late, fired)
		}
	}
	inline, timed, pending := python.AfterWorkForTest(inst)
	if done := inline - i0 + timed - t0; done != n && !(done == n+1 && !pending) {
		t.Fatalf("%d cells, work done %d times inline, %d by the timer, pending %v", n, inline-i0, timed-t0, pending)
	}
}
