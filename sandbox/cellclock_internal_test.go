package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCellClockReusedAcrossCells: a session's cells share one pair of
// timers, taken back after each cell (issue 15: no timers made a cell).
func TestCellClockReusedAcrossCells(t *testing.T) {
	var cs cellClocks
	a := cs.take()
	cs.put(a)
	if b := cs.take(); b != a {
		t.Fatal("a second cell did not reuse the first cell's clock")
	}
	// A nested cell runs while its parent does: it gets a clock of its own.
	if c := cs.take(); c == a {
		t.Fatal("two running cells share a clock")
	}
}

func startClock(ck *cellClock, timeout, hard time.Duration) (context.Context, *activity) {
	ctx, cancel := context.WithCancelCause(context.Background())
	act := &activity{timer: ck.timeout, timeout: timeout}
	ck.start(cancel, act, hard)
	return ctx, act
}

func waitCause(t *testing.T, ctx context.Context, want error) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("the cell was not stopped (want %v)", want)
	}
	if got := context.Cause(ctx); !errors.Is(got, want) {
		t.Fatalf("stopped by %v, want %v", got, want)
	}
}

// TestCellClockStopsACell: a reused clock still stops its cell at the
// timeout, and at the hard limit.
func TestCellClockStopsACell(t *testing.T) {
	var cs cellClocks
	ck := cs.take()
	for range 3 { // the same clock, cell after cell
		ctx, _ := startClock(ck, 5*time.Millisecond, time.Hour)
		waitCause(t, ctx, errCellTimeout)
		ck.stop()
		ctx, _ = startClock(ck, time.Hour, 5*time.Millisecond)
		waitCause(t, ctx, errCellHardLimit)
		ck.stop()
	}
}

// TestCellClockLateCallback: a callback that comes late, for a cell that
// has ended (AfterFunc's Stop cannot take back one already started), does
// not stop the next cell; nor does one for a held timer, or after a
// replayed stop stopped the timers.
func TestCellClockLateCallback(t *testing.T) {
	var cs cellClocks
	ck := cs.take()
	ctx, _ := startClock(ck, 2*time.Millisecond, time.Hour)
	waitCause(t, ctx, errCellTimeout)
	ck.stop()
	ck.timedOut() // late, between cells
	ck.hardLimitReached()

	next, act := startClock(ck, time.Hour, time.Hour)
	ck.timedOut() // late, while the next cell runs
	ck.hardLimitReached()
	if next.Err() != nil {
		t.Fatalf("a late callback stopped the next cell: %v", context.Cause(next))
	}
	// Past its deadline but held by a host call: not due.
	act.mu.Lock()
	act.deadline = time.Now().Add(-time.Second)
	act.mu.Unlock()
	release := act.hold()
	ck.timedOut()
	if next.Err() != nil {
		t.Fatalf("a held timer stopped the cell: %v", context.Cause(next))
	}
	release()
	ck.stoppedByReplay()
	act.mu.Lock()
	act.deadline = time.Now().Add(-time.Second)
	act.mu.Unlock()
	ck.timedOut()
	if next.Err() != nil {
		t.Fatalf("a timer a replayed stop stopped, stopped the cell: %v", context.Cause(next))
	}
	ck.stop()
}
