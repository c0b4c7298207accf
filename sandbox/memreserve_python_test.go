package sandbox_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// TestMemoryBudgetPythonEvalsUnmeasured: an eval of a Python session
// charges it an upper bound known without measuring it (the instance's
// SizeBound: its linear memory's size, its checkpoint and what the
// pending take may add), so trivial evals in a session well inside the
// budget are never measured; each used to be, right after it (the page
// map read and the wait for the checkpoint: 27% of serve's CPU per
// trivial cell, issue 15). What a cell grows still counts at once: the
// charge right after a cell that grew the session by 48 MiB is at least
// that, and the session measured later holds no more than it was charged.
func TestMemoryBudgetPythonEvalsUnmeasured(t *testing.T) {
	for _, checkpoints := range []bool{false, true} {
		name := "checkpoints off"
		if checkpoints {
			name = "checkpoints on"
		}
		t.Run(name, func(t *testing.T) {
			m := newManager(t, sandbox.ManagerOptions{MemoryBudgetBytes: 2 << 30, IdleTimeout: -1, TrimIdleAfter: -1,
				Session: sandbox.SessionOptions{MemoryLimitBytes: 256 << 20, Checkpoints: checkpoints}})
			ctx := context.Background()
			id := mustCreate(t, m, "a")
			py := func(code string) {
				t.Helper()
				res, err := m.Eval(ctx, "a", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
				if err != nil {
					t.Fatal(err)
				}
				if c := res.Details.Cells[0]; c.Status != sandbox.StatusComplete {
					t.Fatalf("%q: %s %q", code, c.Status, c.Output)
				}
			}
			py("x = 0")
			for range 3 {
				m.Sweep(ctx)
			}
			before := sandbox.MeasuresForTest()
			const n = 20
			for i := range n {
				py("x += 1")
				if i%5 == 4 {
					m.Sweep(ctx) // as the manager's own sweeper does after evals
				}
			}
			if got := sandbox.MeasuresForTest() - before; got != 0 {
				t.Errorf("%d trivial evals measured the session %d times, want none", n, got)
			}
			sess, _ := m.Session("a", id)
			bound := m.ResidentBytes()
			measured := sess.ResidentBytes()
			t.Logf("after a trivial cell: charged %d KiB, measured %d KiB", bound>>10, measured>>10)
			py("big = bytearray(48 << 20)\nfor i in range(0, len(big), 4096): big[i] = 1")
			charged := m.ResidentBytes()
			if charged < measured+48<<20 {
				t.Errorf("right after a cell that grew the session by 48 MiB from %d MiB the budget counts %d MiB", measured>>20, charged>>20)
			}
			if got := sess.ResidentBytes(); got > charged {
				t.Errorf("the session measured holds %d MiB, charged %d MiB before: the charge was no upper bound", got>>20, charged>>20)
			}
			if err := sandbox.CheckMemoryTotalsForTest(m); err != nil {
				t.Error(err)
			}
		})
	}
}
