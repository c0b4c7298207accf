package replay_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/replay"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/tape"
)

// TestInterruptBeforeStartReplays: a Python cell interrupted while the
// session was still starting its runtime (before any of its code ran) is
// recorded as stopped before its start (before_start, at position zero),
// and its replay does not run it either: the same cancelled result, and
// the state after it (the cell's assignment never made) is the same. The
// replay is exact, and its report says so (no NotExact line). The
// JavaScript case is sandbox's TestInterruptBeforeStartReplaysJavaScript,
// which holds the JavaScript runtime's start with a test hook.
func TestInterruptBeforeStartReplays(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	// Another session's first Python cell starts the sandbox's Python
	// runtime (a template boot, hundreds of milliseconds); the recorded
	// session's first cell waits for it, and is interrupted while it does.
	other, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	otherDone := make(chan error, 1)
	go func() {
		_, err := other.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "1"}}})
		otherDone <- err
	}()
	time.Sleep(20 * time.Millisecond)
	var buf bytes.Buffer
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Record: &buf})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s.Interrupt() != nil { // ErrNotRunning until the Eval has begun
			time.Sleep(time.Millisecond)
		}
	}()
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "x = 'ran'\nprint(x)"}}})
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if err := <-otherDone; err != nil {
		t.Fatal(err)
	}
	c := res.Details.Cells[0]
	if c.Status != sandbox.StatusCancelled || c.Output != "cancelled: interrupted\n" {
		t.Fatalf("the interrupted cell: %s %q; want it cancelled before it ran", c.Status, c.Output)
	}
	res, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(globals().get('x', 'never ran'))"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Details.Cells[0].Output; got != "never ran\n" {
		t.Fatalf("after the interrupted cell: %q", got)
	}
	s.Close(ctx)
	tp, err := tape.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var stops []tape.Record
	for _, r := range tp.Events {
		if r.Type == tape.TypeStop {
			stops = append(stops, r)
		}
	}
	if len(stops) != 1 || stops[0].Cause != tape.CauseInterrupt || stops[0].Cell != 0 || stops[0].Checks != 0 || stops[0].Fuel != 0 || !stops[0].BeforeStart {
		t.Fatalf("stop records %+v; want one interrupt of cell 0 before its start", stops)
	}
	rep, err := replay.Run(ctx, tp, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical || rep.Requests != 2 {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
		t.Fatalf("the interrupt before the start did not replay (%d requests)", rep.Requests)
	}
	if len(rep.NotExact) != 0 {
		t.Errorf("not exact: %q; the stop before the start replays exactly", rep.NotExact)
	}

	// As a tape of format 2 held it (a stop at position zero, without
	// before_start): it still replays, and the report says the tape
	// cannot name the point, not that Python meters no fuel.
	old := *tp
	old.Header.Format = 2
	old.Events = nil
	for _, r := range tp.Events {
		r.BeforeStart = false
		old.Events = append(old.Events, r)
	}
	rep, err = replay.Run(ctx, &old, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Identical {
		for _, d := range rep.Divergences {
			t.Error(d.String())
		}
	}
	if len(rep.NotExact) != 1 || !strings.Contains(rep.NotExact[0], "request 1, cell 0: stopped by an interrupt when recorded, at a point a tape of format 2 cannot name") || strings.Contains(rep.NotExact[0], "JavaScript") {
		t.Errorf("not exact, format 2: %q", rep.NotExact)
	}
}
