package sandbox_test

import (
	"context"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// bigPython is a Python cell that leaves 24 MB live in its session.
const bigPython = "big = bytearray(24_000_000)\nbig[::4096] = b'x' * len(big[::4096])"

// TestMemoryBudgetChargesLoadedAndForkedSessions: a session loaded from
// the store, or made by a fork, counts in the memory budget what it holds
// as soon as it is there, not 0 bytes until its first eval (issue 9); and
// a budget too small for two loaded sessions evicts the idle one, as it
// does for sessions that ran their cells here.
func TestMemoryBudgetChargesLoadedAndForkedSessions(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	ws, st := t.TempDir(), dirStore(t)
	m1 := storeManager(t, ws, st)
	var ids []string
	for range 2 {
		id, err := m1.Create(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		evalText(t, m1, "alice", id, "py", bigPython)
		ids = append(ids, id)
	}
	m1.Close(ctx)

	// Loaded: charged at the load, before any eval.
	m2 := storeManager(t, ws, st)
	if got := m2.ResidentBytes(); got != 0 {
		t.Fatalf("a new manager counts %d bytes", got)
	}
	mustSession(t, m2, "alice", ids[0])
	loaded := m2.ResidentBytes()
	if loaded < 24_000_000 {
		t.Fatalf("the loaded session counts %d bytes, want at least the 24 MB its Python holds", loaded)
	}
	if err := sandbox.CheckMemoryTotalsForTest(m2); err != nil {
		t.Fatal(err)
	}

	// Forked: the copy is charged at the fork.
	copyID, err := m2.Fork(ctx, "alice", ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := m2.ResidentBytes(); got-loaded < 24_000_000 {
		t.Fatalf("after the fork the sessions count %d bytes, %d before: the copy's 24 MB are missing", got, loaded)
	}
	if got := evalText(t, m2, "alice", copyID, "py", "print(len(big))").Content[0].Text; got != "24000000" {
		t.Fatalf("the fork says %q", got)
	}
	m2.Close(ctx)

	// A budget that holds one loaded session but not two: loading the
	// second evicts the first (idle), and the budget is kept.
	budget := loaded + loaded/2
	m3 := newStoreManager(t, sandbox.ManagerOptions{Workspace: ws, Store: st, MemoryBudgetBytes: budget}, nil)
	mustSession(t, m3, "alice", ids[0])
	mustSession(t, m3, "alice", ids[1])
	if n := m3.OwnerLen("alice"); n != 1 {
		t.Fatalf("with a budget of %d bytes, two sessions of about %d each are both kept (%d)", budget, loaded, n)
	}
	if got := m3.ResidentBytes(); got > budget {
		t.Fatalf("the sessions count %d bytes, over the budget of %d", got, budget)
	}
	if got := evalText(t, m3, "alice", ids[1], "py", "print(len(big))").Content[0].Text; got != "24000000" {
		t.Fatalf("the session loaded last says %q", got)
	}
	if err := sandbox.CheckMemoryTotalsForTest(m3); err != nil {
		t.Fatal(err)
	}
}
