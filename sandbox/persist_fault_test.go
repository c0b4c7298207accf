package sandbox_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/store"
)

// outage is a store taken away and brought back mid-session.
type outage struct {
	name  string
	open  func(t *testing.T) store.Store
	start func(t *testing.T) // the outage starts
	end   func(t *testing.T) // the store is back
	says  string             // what the error names
}

// storeOutages: the dir store's folder made unwritable (replaced by a
// file: the tests run as root, whom permissions do not stop), and
// PostgreSQL stopped.
func storeOutages(t *testing.T) []outage {
	var dir *store.Dir
	var pg *testenv.Postgres
	return []outage{{
		name: "dir",
		open: func(t *testing.T) store.Store { dir = dirStore(t); return dir },
		start: func(t *testing.T) {
			if err := os.Rename(dir.Root(), dir.Root()+".away"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir.Root(), []byte("not a folder"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		end: func(t *testing.T) {
			if err := os.Remove(dir.Root()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dir.Root()+".away", dir.Root()); err != nil {
				t.Fatal(err)
			}
		},
		says: "dir store",
	}, {
		name: "postgres",
		open: func(t *testing.T) store.Store {
			pg = testenv.StartPostgres(t)
			st, err := store.Open(pg.URL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		start: func(t *testing.T) { pg.Stop() },
		end:   func(t *testing.T) { pg.Start() },
		says:  "postgres",
	}}
}

// TestManagerStoreOutage: issue 16's fault rule on both stores. With the
// store gone mid-session, an eval fails with ErrStore wrapping
// store.ErrUnavailable (servers answer 503) saying which store failed, in
// bounded time; a session another manager loads meanwhile fails the same
// way (not "no such session"); the stored state is as of the last
// answered eval, its Python memory, files and frames whole. Once the
// store is back the session takes evals again, and its next save carries
// every change since the last stored one (the failed eval's too: a lone
// node keeps its copy), which another manager then loads.
func TestManagerStoreOutage(t *testing.T) {
	testenv.RequirePython(t)
	for _, o := range storeOutages(t) {
		t.Run(o.name, func(t *testing.T) {
			ctx := context.Background()
			st := o.open(t)
			m := storeManager(t, t.TempDir(), st)
			id, err := m.Create(ctx, "alice")
			if err != nil {
				t.Fatal(err)
			}
			evalText(t, m, "alice", id, "py", "x = 1\nblob = bytes(range(256)) * 4000\nopen('f.txt', 'w').write('one')")
			evalText(t, m, "alice", id, "py", "x += 1\nopen('f.txt', 'w').write('two')")

			o.start(t)
			start := time.Now()
			_, err = m.Eval(ctx, "alice", id, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "x += 1\nopen('f.txt', 'w').write('three')\nopen('g.txt', 'w').write('new')"}}})
			if !errors.Is(err, sandbox.ErrStore) || !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), o.says) || !strings.Contains(err.Error(), id) {
				t.Fatalf("an eval during the outage: %v; want ErrStore wrapping store.ErrUnavailable, naming the %s and the session", err, o.says)
			}
			if d := time.Since(start); d > 40*time.Second {
				t.Errorf("the eval took %v to fail", d)
			}
			other := storeManager(t, t.TempDir(), st)
			if _, err := other.Session("alice", id); !errors.Is(err, sandbox.ErrStore) || !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("a load during the outage: %v; want ErrStore wrapping store.ErrUnavailable", err)
			}
			o.end(t)

			// Never corrupted: what is stored is the last answered eval.
			check := storeManager(t, t.TempDir(), st)
			if got := evalText(t, check, "alice", id, "py", "import os\nprint(x, len(blob), open('f.txt').read(), os.path.exists('g.txt'))").Content[0].Text; got != "2 1024000 two False" {
				t.Fatalf("the stored state after the outage: %q, want the last answered eval's", got)
			}
			check.Unload(ctx, id)

			// Recovered: the session goes on, and its next save carries
			// what the failed one could not store.
			if got := evalText(t, m, "alice", id, "py", "x += 1\nprint(x)").Content[0].Text; got != "4" {
				t.Fatalf("an eval after the outage: %q", got)
			}
			m.Unload(ctx, id)
			again := storeManager(t, t.TempDir(), st)
			if got := evalText(t, again, "alice", id, "py", "print(x, len(blob), open('f.txt').read(), open('g.txt').read())").Content[0].Text; got != "4 1024000 three new" {
				t.Fatalf("loaded after the store came back: %q", got)
			}
		})
	}
}
