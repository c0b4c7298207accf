package callorder_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes/callorder"
)

// TestRankedTellsHeldCell: a replayed cell that holds an answer for a
// call not ranked yet is told on Ranked when that call is ranked, and
// Turn then hands the held answer over; Held counts the answers held
// and wakes those that wait for a change. A recorded cell, or one that
// holds nothing, has no Ranked channel to wait on.
func TestRankedTellsHeldCell(t *testing.T) {
	if c := callorder.NewCell[string](callorder.With(context.Background(), false)); c.Ranked() != nil {
		t.Fatal("a recorded cell has a Ranked channel")
	}
	ctx := callorder.With(context.Background(), true)
	p := callorder.ProgressOf(ctx)
	c := callorder.NewCell[string](ctx)
	_, sub := c.Ticket(ctx)
	_, quick := c.Ticket(ctx)
	if c.Ranked() != nil {
		t.Fatal("a cell that holds nothing has a Ranked channel")
	}
	quick.SetRank(0)
	_, changed := p.Held()
	if _, ok := c.Came(quick, "quick", 1); ok {
		t.Fatal("quick's answer was handed over while sub, which may come before it, has no rank")
	}
	select {
	case <-changed:
	default:
		t.Error("holding an answer woke none of those waiting for a change")
	}
	if n, _ := p.Held(); n != 1 {
		t.Errorf("Held: %d; want 1", n)
	}
	ranked := c.Ranked()
	if ranked == nil {
		t.Fatal("a cell that holds an answer has no Ranked channel")
	}
	select { // quick's own rank told it before it was held
	case <-ranked:
	default:
	}
	select {
	case <-ranked:
		t.Fatal("told with no rank given")
	default:
	}
	sub.SetRank(1)
	select {
	case <-ranked:
	default:
		t.Fatal("sub's rank did not tell the cell")
	}
	if d, ok := c.Turn(1); !ok || d != "quick" {
		t.Fatalf("Turn after sub's rank: %q %v; want quick's answer", d, ok)
	}
	if n, _ := p.Held(); n != 0 {
		t.Errorf("Held after the turn: %d; want 0", n)
	}
	if c.Ranked() != nil {
		t.Error("Ranked once nothing is held")
	}
}
