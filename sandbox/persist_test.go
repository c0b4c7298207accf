package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/store"
)

// dirStore is a dir store in a temporary folder.
func dirStore(t *testing.T) *store.Dir {
	t.Helper()
	st, err := store.OpenDir(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// storeManager is a manager over workspace ws keeping its sessions in the
// store st, on a sandbox of its own (as a restarted process has).
func storeManager(t *testing.T, ws string, st store.Store) *sandbox.Manager {
	t.Helper()
	return newStoreManager(t, sandbox.ManagerOptions{Workspace: ws, Store: st}, nil)
}

// storeManagerLog is storeManager logging to log.
func storeManagerLog(t *testing.T, ws string, st store.Store, log *slog.Logger) *sandbox.Manager {
	t.Helper()
	return newStoreManager(t, sandbox.ManagerOptions{Workspace: ws, Store: st}, log)
}

// newStoreManager makes every manager of the store tests: mo (no idle
// timeout unless it sets one) on a sandbox of its own logging to log (nil:
// the default), both closed with the test.
func newStoreManager(t *testing.T, mo sandbox.ManagerOptions, log *slog.Logger) *sandbox.Manager {
	t.Helper()
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if mo.IdleTimeout == 0 {
		mo.IdleTimeout = -1
	}
	m, err := sandbox.NewManager(sb, mo)
	if err != nil {
		sb.Close(ctx)
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(ctx); sb.Close(ctx) })
	return m
}

func evalText(t *testing.T, m *sandbox.Manager, owner, id, lang, code string) *sandbox.Result {
	t.Helper()
	res, err := m.Eval(context.Background(), owner, id, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code}}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestManagerStoreRestart: a session kept in a store is found by a new
// Manager (a new sandbox, as after a restart) over the same workspace with
// its Python variables, its files, its cut outputs and its fuel; its
// JavaScript state is rebuilt from its journal, silently; another owner
// still sees no such session.
func TestManagerStoreRestart(t *testing.T) {
	testenv.RequirePython(t)
	ws := t.TempDir()
	st := dirStore(t)
	ctx := context.Background()
	m1 := storeManager(t, ws, st)
	id, err := m1.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	evalText(t, m1, "alice", id, "py", "import json\nanswer = {'n': 42}\nopen('notes.txt', 'w').write('kept')\nimport os\nos.makedirs('sub/deeper', exist_ok=True)\nopen('sub/deeper/x.bin', 'wb').write(bytes(range(256)))")
	evalText(t, m1, "alice", id, "js", "var jsGlobal = 7")
	evalText(t, m1, "alice", id, "ts", "let typed: number = jsGlobal + 1")
	// The record holds the JavaScript journal, as frames after Python's.
	key, err := m1.StateKeyForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Load(ctx, id, key)
	if err != nil {
		t.Fatal(err)
	}
	var jsLog struct {
		V      int
		Had    bool
		Frames int
	}
	if err := json.Unmarshal(rec.JS, &jsLog); err != nil || !jsLog.Had || jsLog.V != 1 || jsLog.Frames < 1 || len(rec.PythonFrames) <= jsLog.Frames {
		t.Fatalf("the record's JavaScript: %s (%v)", rec.JS, err)
	}
	res := evalText(t, m1, "alice", id, "py", "print('line\\n' * 5000)")
	if len(res.Details.Meta.Truncated) != 1 {
		t.Fatalf("the long output was not cut: %+v", res.Details.Meta)
	}
	outID := res.Details.Meta.Truncated[0].OutputID
	full, err := mustSession(t, m1, "alice", id).Output(outID)
	if err != nil {
		t.Fatal(err)
	}
	evalText(t, m1, "alice", id, "py", "os.remove('notes.txt')\nopen('later.txt', 'w').write('after')")
	info, _ := m1.Info(ctx, "alice", id)
	m1.Close(ctx) // the process ends; its workspace and store stay

	m2 := storeManager(t, ws, st)
	if _, err := m2.Session("bob", id); !errors.Is(err, sandbox.ErrNoSession) {
		t.Fatalf("another owner: %v, want ErrNoSession", err)
	}
	if got := evalText(t, m2, "alice", id, "py", "print(answer['n'], json.dumps([1]), open('later.txt').read(), os.path.exists('notes.txt'), len(open('sub/deeper/x.bin','rb').read()))").Content[0].Text; got != "42 [1] after False 256" {
		t.Fatalf("after the restart Python says %q", got)
	}
	got, err := mustSession(t, m2, "alice", id).Output(outID)
	if err != nil || got != full {
		t.Fatalf("output %s after the restart: %d bytes, %v; want %d bytes", outID, len(got), err, len(full))
	}
	if info2, _ := m2.Info(ctx, "alice", id); info2.FuelUsed < info.FuelUsed {
		t.Fatalf("fuel used %d after the restart, %d before", info2.FuelUsed, info.FuelUsed)
	}
	js := evalText(t, m2, "alice", id, "js", "print(typeof jsGlobal, typed)")
	if js.Content[0].Text != "number 8" || len(js.Details.StatusEvents) != 0 {
		t.Fatalf("first JavaScript cell after the restart: %q, events %+v", js.Content[0].Text, js.Details.StatusEvents)
	}
	// Deleting the session deletes its record.
	if err := m2.Delete(ctx, "alice", id); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(ctx, id, "any"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the record after Delete: %v", err)
	}
}

// TestManagerStoreFreshWorkspace: a session moves to a manager over
// another (empty) workspace, as to another machine sharing the store:
// its files come from the store alone.
func TestManagerStoreFreshWorkspace(t *testing.T) {
	testenv.RequirePython(t)
	st := dirStore(t)
	ctx := context.Background()
	m1 := storeManager(t, t.TempDir(), st)
	id, _ := m1.Create(ctx, "alice")
	evalText(t, m1, "alice", id, "py", "v = 'moved'\nopen('f.txt','w').write('file moved')\nos = __import__('os'); os.symlink('f.txt', 'link')")
	m1.Close(ctx)
	ws2 := t.TempDir()
	m2 := storeManager(t, ws2, st)
	if got := evalText(t, m2, "alice", id, "py", "print(v, open('link').read())").Content[0].Text; got != "moved file moved" {
		t.Fatalf("moved session: %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws2, id, "f.txt")); err != nil {
		t.Fatal(err)
	}
}

// TestManagerStoreRefusesOtherBuild: a record of another Python build is
// not loaded; the request fails with ErrStore saying why.
func TestManagerStoreRefusesOtherBuild(t *testing.T) {
	testenv.RequirePython(t)
	st := dirStore(t)
	ctx := context.Background()
	if err := st.Save(ctx, &store.State{ID: "0123456789abcdef01234567", Owner: "alice", Artifact: "py-another-build", FullFiles: true}, 1); err != nil {
		t.Fatal(err)
	}
	m := storeManager(t, t.TempDir(), st)
	_, err := m.Eval(ctx, "alice", "0123456789abcdef01234567", sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "1"}}})
	if !errors.Is(err, sandbox.ErrStore) || !errors.Is(err, store.ErrArtifactMismatch) || !strings.Contains(err.Error(), "py-another-build") {
		t.Fatalf("eval of a record of another build: %v", err)
	}
}

func mustSession(t *testing.T, m *sandbox.Manager, owner, id string) *sandbox.Session {
	t.Helper()
	s, err := m.Session(owner, id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestManagerStoreConcurrentLoad: requests that arrive together for a
// session the manager does not hold load it once; each finds it.
func TestManagerStoreConcurrentLoad(t *testing.T) {
	testenv.RequirePython(t)
	st := dirStore(t)
	ctx := context.Background()
	ws := t.TempDir()
	m1 := storeManager(t, ws, st)
	id, _ := m1.Create(ctx, "alice")
	evalText(t, m1, "alice", id, "py", "n = 5")
	m1.Close(ctx)
	var logged syncBuffer
	m2 := storeManagerLog(t, ws, st, slog.New(slog.NewTextHandler(&logged, nil)))
	errs := make(chan error, 6)
	for range 6 {
		go func() {
			res, err := m2.Eval(ctx, "alice", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(n)"}}})
			if err == nil && res.Content[0].Text != "5" {
				err = errors.New("got " + res.Content[0].Text)
			}
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := m2.Len(); n != 1 {
		t.Fatalf("the manager holds %d sessions after concurrent loads of one", n)
	}
	if n := strings.Count(logged.String(), "session loaded from the store"); n != 1 {
		t.Fatalf("the session was loaded %d times, want once:\n%s", n, logged.String())
	}
}

type syncBuffer = testenv.LockedBuffer

// TestManagerStoreRecordGone: when a session's record disappears under it
// (deleted by hand, or by another process), its next save writes every
// file again, not a delta of the last eval's changes alone.
func TestManagerStoreRecordGone(t *testing.T) {
	testenv.RequirePython(t)
	st := dirStore(t)
	ctx := context.Background()
	ws := t.TempDir()
	m1 := storeManager(t, ws, st)
	id, _ := m1.Create(ctx, "alice")
	evalText(t, m1, "alice", id, "py", "open('old.txt', 'w').write('old')")
	if err := st.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	evalText(t, m1, "alice", id, "py", "open('new.txt', 'w').write('new')")
	m1.Close(ctx)
	m2 := storeManager(t, t.TempDir(), st) // files from the store alone
	if got := evalText(t, m2, "alice", id, "py", "print(open('old.txt').read(), open('new.txt').read())").Content[0].Text; got != "old new" {
		t.Fatalf("after the record was rewritten: %q", got)
	}
}

// TestManagerStoreExpires: a stored session nobody came back to within the
// idle timeout, also one no manager has loaded since a restart, is
// deleted by the sweep with its folder; a recent one stays.
func TestManagerStoreExpires(t *testing.T) {
	st := dirStore(t)
	ctx := context.Background()
	ws := t.TempDir()
	m1 := storeManager(t, ws, st)
	old, _ := m1.Create(ctx, "alice")
	recent, _ := m1.Create(ctx, "alice")
	m1.Close(ctx)
	long := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(st.Root(), old, "log"), long, long); err != nil {
		t.Fatal(err)
	}
	m2 := newStoreManager(t, sandbox.ManagerOptions{Workspace: ws, IdleTimeout: time.Hour, Store: st}, nil)
	m2.Sweep(ctx)
	if _, err := st.Load(ctx, old, "any"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the idle record after a sweep: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, old)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the idle session's folder after a sweep: %v", err)
	}
	if _, err := m2.Session("alice", old); !errors.Is(err, sandbox.ErrNoSession) {
		t.Fatalf("the expired session: %v", err)
	}
	if _, err := m2.Session("alice", recent); err != nil {
		t.Fatalf("the recent session: %v", err)
	}
}

// TestManagerStoreReplacedFile: a file replaced by another of the same
// size and modification time (renamed over it) is saved again: its
// stamp's inode changed, though its size and time did not.
func TestManagerStoreReplacedFile(t *testing.T) {
	testenv.RequirePython(t)
	st := dirStore(t)
	ctx := context.Background()
	m1 := storeManager(t, t.TempDir(), st)
	id, err := m1.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	evalText(t, m1, "alice", id, "py", "import os\nopen('a.txt', 'w').write('aaaa')\nos.utime('a.txt', ns=(10**18, 10**18))")
	evalText(t, m1, "alice", id, "py", "open('tmp', 'w').write('bbbb')\nos.utime('tmp', ns=(10**18, 10**18))\nos.replace('tmp', 'a.txt')")
	m1.Close(ctx)
	m2 := storeManager(t, t.TempDir(), st)
	if got := evalText(t, m2, "alice", id, "py", "print(open('a.txt').read())").Content[0].Text; got != "bbbb" {
		t.Fatalf("a file replaced by one of the same size and time: %q after a load, want the new content", got)
	}
}
