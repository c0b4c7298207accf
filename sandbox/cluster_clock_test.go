package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/store"
)

// deterministicManager is a deterministic manager over workspace ws
// keeping its sessions in st, on a sandbox of its own (as a restarted
// process, or another node, has).
func deterministicManager(t *testing.T, ws string, st store.Store) *sandbox.Manager {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.NewManager(sb, sandbox.ManagerOptions{Workspace: ws, IdleTimeout: -1, Store: st,
		Session: sandbox.SessionOptions{Deterministic: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx); sb.Close(ctx) })
	return m
}

// TestDeterministicResumeFromStore: a deterministic session loaded from
// its store (by a new process over the same workspace, and by another
// over a workspace of its own, as another node) goes on with the clock
// and random stream it had, printing the same bytes as a session that
// never left; before the clock was saved it started again from the epoch
// and the seed.
func TestDeterministicResumeFromStore(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	cells := []string{
		"import time, os\nopen('a.txt', 'w').write('a')\nprint(time.time(), time.monotonic_ns(), os.urandom(8).hex())",
		"time.sleep(5)\nprint(time.time(), time.perf_counter_ns(), os.urandom(3).hex(), os.urandom(16).hex())",
		"open('b.txt', 'w').write('b')\nprint(time.time(), os.urandom(5).hex(), os.stat('b.txt').st_mtime_ns, os.stat('a.txt').st_mtime_ns)",
	}
	run := func(m *sandbox.Manager, id, code string) string {
		t.Helper()
		res := evalText(t, m, "alice", id, "py", code)
		if res.Details.IsError {
			t.Fatalf("cell %q: %+v", code, res.Details.Cells)
		}
		return res.Details.Cells[0].Output
	}

	// One session that never leaves its manager.
	stay := deterministicManager(t, t.TempDir(), nil)
	id0, err := stay.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, c := range cells {
		want = append(want, run(stay, id0, c))
	}

	st, err := store.OpenDir(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	m1 := deterministicManager(t, ws, st)
	id, err := m1.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got := run(m1, id, cells[0]); got != want[0] {
		t.Fatalf("the first cell: %q, want %q", got, want[0])
	}
	m1.Close(ctx)
	// A restart: a new process over the same workspace.
	m2 := deterministicManager(t, ws, st)
	if got := run(m2, id, cells[1]); got != want[1] {
		t.Errorf("after a restart: %q, want %q (as if it never left)", got, want[1])
	}
	m2.Close(ctx)
	// Another node: a workspace of its own.
	m3 := deterministicManager(t, t.TempDir(), st)
	if got := run(m3, id, cells[2]); got != want[2] {
		t.Errorf("on another node: %q, want %q (as if it never left)", got, want[2])
	}
	m3.Close(ctx)

	// A clock saved in a version this build does not read is refused,
	// saying so, rather than resumed with another sequence.
	key, err := m3.StateKeyForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Load(ctx, id, key)
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(rec.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	clock, _ := meta["clock"].(map[string]any)
	if clock == nil {
		t.Fatalf("the record's metadata has no clock: %s", rec.Meta)
	}
	clock["v"] = 99
	rec.Meta, _ = json.Marshal(meta)
	rec.FullFiles = true
	if err := st.Save(ctx, rec, rec.Epoch); err != nil {
		t.Fatal(err)
	}
	m4 := deterministicManager(t, t.TempDir(), st)
	_, err = m4.Eval(ctx, "alice", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(1)"}}})
	if !errors.Is(err, sandbox.ErrStore) || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("a clock of another version: %v", err)
	}
}
