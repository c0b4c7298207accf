package callorder_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes/callorder"
)

type otherKey struct{}

// TestProgress: a recorded cell's progress follows its waits (Waiting),
// the calls whose answers it has not taken, the end of a wait with its
// answer or without (Left), and the cell's end, and wakes those that wait
// for a change at each; With's context still carries its parent's values
// and cancellation.
func TestProgress(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "kept"))
	ctx := callorder.With(parent, false)
	if ctx.Value(otherKey{}) != "kept" {
		t.Fatal("With's context lost its parent's value")
	}
	p := callorder.ProgressOf(ctx)
	if p == nil || callorder.ProgressOf(parent) != nil {
		t.Fatal("ProgressOf: the cell's progress is With's only")
	}
	c := callorder.NewCell[string](ctx)
	type state struct {
		wait  int
		in    bool
		open  int
		ended bool
	}
	now := func() (state, <-chan struct{}) {
		w, in, open, ended, ch := p.Now()
		return state{w, in, open, ended}, ch
	}
	check := func(step string, want state, changed <-chan struct{}) <-chan struct{} {
		t.Helper()
		if changed != nil {
			select {
			case <-changed:
			default:
				t.Errorf("%s: those waiting for a change were not woken", step)
			}
		}
		got, ch := now()
		if got != want {
			t.Errorf("%s: %+v; want %+v", step, got, want)
		}
		return ch
	}
	ch := check("new", state{}, nil)
	_, t1 := c.Ticket(ctx)
	ch = check("a call", state{open: 1}, ch)
	_, t2 := c.Ticket(ctx)
	ch = check("two calls", state{open: 2}, ch)
	c.Waiting(1)
	ch = check("in wait 1", state{wait: 1, in: true, open: 2}, ch)
	if d, ok := c.Came(t2, "b", 1); !ok || d != "b" {
		t.Fatalf("a recording takes an answer as it comes: %q %v", d, ok)
	}
	ch = check("wait 1 took an answer", state{wait: 1, open: 1}, ch)
	if t2.Wait() != 1 {
		t.Errorf("the answer's wait: %d; want 1", t2.Wait())
	}
	c.Waiting(2)
	ch = check("in wait 2", state{wait: 2, in: true, open: 1}, ch)
	c.Left()
	ch = check("wait 2 stopped", state{wait: 2, open: 1}, ch)
	c.End()
	check("ended", state{wait: 2, open: 1, ended: true}, ch)
	if t1.Wait() != 0 {
		t.Errorf("an answer never taken has wait %d; want 0", t1.Wait())
	}
	cancel()
	if ctx.Err() == nil {
		t.Error("With's context was not cancelled with its parent")
	}
}

// TestEntered: a runtime's Entered reaches the function of the nested
// cell's context, and nothing else.
func TestEntered(t *testing.T) {
	callorder.Entered(context.Background(), 1) // no hook: nothing happens
	var got []int
	ctx := callorder.WithEntered(context.Background(), func(w int) { got = append(got, w) })
	callorder.Entered(ctx, 2)
	callorder.Entered(callorder.With(ctx, true), 3) // the hook goes with the nested cell's context
	if len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("Entered called the hook with %v; want [2 3]", got)
	}
	if c := callorder.NewCell[int](context.Background()); c.On() {
		t.Fatal("a cell without With is ordered")
	}
}

// TestWithValue: WithValue's context carries the cell's Progress and the
// value under its key, and passes every other key on to its parent.
func TestWithValue(t *testing.T) {
	type key struct{ n int }
	parent := context.WithValue(context.Background(), key{1}, "parent's")
	ctx := callorder.WithValue(parent, true, key{2}, "its own")
	if callorder.ProgressOf(ctx) == nil {
		t.Fatal("no Progress")
	}
	if got := ctx.Value(key{2}); got != "its own" {
		t.Errorf("its value: %v", got)
	}
	if got := ctx.Value(key{1}); got != "parent's" {
		t.Errorf("the parent's value: %v", got)
	}
	if got := callorder.With(parent, false).Value(key{2}); got != nil {
		t.Errorf("With's context has %v under WithValue's key", got)
	}
	if got := ctx.Value(key{3}); got != nil {
		t.Errorf("another key: %v", got)
	}
}
