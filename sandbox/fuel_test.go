package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

func TestFuelBudgets(t *testing.T) {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), FuelBudget: 200_000_000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	eval := func(c sandbox.Cell) sandbox.CellResult {
		t.Helper()
		res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{c}})
		if err != nil {
			testenv.NotBuilt(t, err)
			t.Fatal(err)
		}
		return res.Details.Cells[0]
	}
	// A cell budget stops a loop, and says so.
	c := eval(sandbox.Cell{Language: "py", Code: "n = 0\nwhile True:\n    n += 1", Fuel: 20_000_000})
	if c.Status != sandbox.StatusError || !strings.Contains(c.Output, "fuel exhausted: the cell used its budget of 20000000 units") {
		t.Fatalf("cell budget: %s %q", c.Status, c.Output)
	}
	// The session budget (200M) runs out on a later loop.
	c = eval(sandbox.Cell{Language: "py", Code: "while True:\n    n += 1"})
	if c.Status != sandbox.StatusError || !strings.Contains(c.Output, "the session's budget of 200000000 units is used up") {
		t.Fatalf("session budget: %s %q", c.Status, c.Output)
	}
	// After that, Python cells are refused with the same message; JS runs.
	c = eval(sandbox.Cell{Language: "py", Code: "print(n)"})
	if c.Status != sandbox.StatusError || !strings.Contains(c.Output, "used up") {
		t.Fatalf("after the budget: %s %q", c.Status, c.Output)
	}
	if c = eval(sandbox.Cell{Language: "js", Code: "1 + 1"}); c.Status != sandbox.StatusComplete {
		t.Fatalf("js after the python budget: %s %q", c.Status, c.Output)
	}
	// Fuel on a JS cell is refused with a reason.
	_, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: "1", Fuel: 5}}})
	var re *sandbox.RequestError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "Python cells only") {
		t.Fatalf("fuel on a JS cell: %v", err)
	}
}
