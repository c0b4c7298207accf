package sandbox_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// TestGuestExitIsolated: a Python cell that ends its interpreter
// (os._exit, os.abort) ends that cell only. Its own session rolls back and
// goes on; another session of the same Sandbox, mid-cell at that moment,
// is not touched. Before the fix os._exit took the whole process down
// (eval, serve with every tenant, mcp).
func TestGuestExitIsolated(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		testenv.NotBuilt(t, err)
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	newSession := func() *sandbox.Session {
		s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: t.TempDir(), Checkpoints: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(ctx) })
		return s
	}
	victim, other := newSession(), newSession()
	mustEval(t, victim, py("a = 1"))
	mustEval(t, other, py("b = 2"))

	var wg sync.WaitGroup
	wg.Add(1)
	var otherRes *sandbox.Result
	go func() {
		defer wg.Done()
		// Busy while the victim's interpreters end.
		otherRes, _ = other.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{py("import time\nt = time.time()\nn = 0\nwhile time.time() - t < 1.0:\n    n += 1\nb += 1\nprint('other', b)")}})
	}()
	for _, code := range []string{"import os; a = 99; os._exit(0)", "import os; a = 98; os.abort()"} {
		res := mustEval(t, victim, py(code))
		c := res.Details.Cells[0]
		if c.Status != "error" || !strings.Contains(c.Output, "rolled back to before this cell") {
			t.Fatalf("%q: status %s, output %q", code, c.Status, c.Output)
		}
	}
	wg.Wait()
	if otherRes == nil || otherRes.Details.Cells[0].Status != "complete" || otherRes.Details.Cells[0].Output != "other 3\n" {
		t.Fatalf("the other session's cell: %+v", otherRes)
	}
	if res := mustEval(t, victim, py("print(a)")); res.Details.Cells[0].Output != "1\n" {
		t.Fatalf("victim after its exits: %q", res.Details.Cells[0].Output)
	}
	if res := mustEval(t, other, py("print(b)")); res.Details.Cells[0].Output != "3\n" {
		t.Fatalf("other session afterwards: %q", res.Details.Cells[0].Output)
	}
}
