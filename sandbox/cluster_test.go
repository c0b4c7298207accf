package sandbox_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/store"
)

// TestMemoryEvictionKeepsStoredSession: a session evicted to keep the
// memory budget is unloaded, not deleted: with a store its next eval
// loads it, state and files as they were (the several-node test lost
// sessions under load when such evictions deleted their records).
func TestMemoryEvictionKeepsStoredSession(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close(ctx)
	st, err := store.OpenDir(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: t.TempDir(), Store: st, MemoryBudgetBytes: 1, TrimIdleAfter: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	id, err := m.Create(ctx, "owner")
	if err != nil {
		t.Fatal(err)
	}
	py := func(code string) string {
		t.Helper()
		res, err := m.Eval(ctx, "owner", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: code}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Details.Cells[0].Output
	}
	py("x = 41\nopen('f.txt', 'w').write('kept')")
	// The manager's own background sweep may evict the session before
	// this one does: what counts is that it is no longer held.
	m.Sweep(ctx)
	if m.Holds(id) {
		t.Fatal("a sweep over a 1-byte budget left the idle session held")
	}
	if out := py("print(x + 1, open('f.txt').read())"); strings.TrimSpace(out) != "42 kept" {
		t.Fatalf("after the eviction: %q", out)
	}
}
